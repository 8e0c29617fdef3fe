// Makes webhooks.json: one callback body signed by the reference webhook
// libraries that senders use, with the headers each sends. The Go tests
// verify these bytes; Node is needed only to remake the file:
//
//   npm install svix standardwebhooks && node gen.js > webhooks.json
const { Webhook: Svix } = require("svix");
const { Webhook: StandardWebhooks } = require("standardwebhooks");

const secret = "whsec_dHJhdmVscnVsZS1nby1pbnRlcm9wLXNlY3JldA==";
const body = '{"transferId":"tr-1","status":"approved","txId":"0xfeed","timestamp":"2025-03-01T12:00:00Z"}';
const id = "msg_2pYAoKqZrVqg0m9Xh1dxQOfkAvK";
const ts = new Date(1764000000 * 1000);
const seconds = String(ts.getTime() / 1000);

// Each library verifies its own headers before they are written out.
const svixHeaders = { "svix-id": id, "svix-timestamp": seconds, "svix-signature": new Svix(secret).sign(id, ts, body) };
const swHeaders = { "webhook-id": id, "webhook-timestamp": seconds, "webhook-signature": new StandardWebhooks(secret).sign(id, ts, body) };
const now = Date.now;
Date.now = () => ts.getTime();
new Svix(secret).verify(body, svixHeaders);
new StandardWebhooks(secret).verify(body, swHeaders);
Date.now = now;

const version = (p) => require(p + "/package.json").version;
console.log(JSON.stringify({
  generator: `svix@${version("svix")}, standardwebhooks@${version("standardwebhooks")}`,
  secret, body,
  deliveries: { svix: svixHeaders, standardwebhooks: swHeaders },
}, null, 2));
