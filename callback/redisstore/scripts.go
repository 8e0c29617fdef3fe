package redisstore

// The store keeps one Redis string per delivery: "b:<token>" while the
// claim with that token is in progress, with the lease as its expiry, and
// "d:<token>" once the claim was completed, with the retention as its
// expiry. Each script reads and writes one key, so it runs atomically, on
// the node that holds the key in a cluster. Each recognises its own claim
// already made (the same token), so that a command the client sends again
// after a lost reply changes nothing more.
//
// The store sends each script whole, with EVAL, every time; never EVALSHA.
// A command can reach Redis after its client stopped waiting for it (a
// server that was paused or slow, a reply lost on a broken connection), and
// Redis may have emptied its script cache in the meantime (a restart, a
// failover to a replica that never ran the script, SCRIPT FLUSH): an
// EVALSHA is then answered NOSCRIPT, which nobody reads, and the
// completion it carried is lost, while an EVAL carries what it needs and
// runs. Redis caches a script it was sent by the script's digest, so an
// EVAL costs the server a SHA-1 of a few hundred bytes, not a compilation.
// Redis 7's functions would need a FUNCTION LOAD on every server of a
// deployment, before any call, and again after each one lost them, and a
// permission that managed Redis services do not always grant.

// claimLua claims KEYS[1] for the token ARGV[1] with the lease ARGV[2]
// (milliseconds) if no claim holds it: 1 (ClaimNew), 2 (ClaimDone) or 3
// (ClaimBusy).
const claimLua = `
local v = redis.call('GET', KEYS[1])
if not v then
  redis.call('SET', KEYS[1], 'b:' .. ARGV[1], 'PX', ARGV[2])
  return 1
end
if v == 'b:' .. ARGV[1] then return 1 end
if string.sub(v, 1, 2) == 'd:' then return 2 end
return 3
`

// completeLua marks KEYS[1] processed by the claim with the token ARGV[1],
// for the retention ARGV[2] (milliseconds), unless another token's claim
// or completion holds it: 1, or 0 (changing nothing) when another token's
// does. A key that holds nothing is marked processed: the claim's lease
// lapsed and nobody claimed the delivery since, so the function ran once,
// and a redelivery must not run it again. A key the same token completed
// already stays so (the completion was sent again after a lost reply).
const completeLua = `
local v = redis.call('GET', KEYS[1])
if v and v ~= 'b:' .. ARGV[1] and v ~= 'd:' .. ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 'd:' .. ARGV[1], 'PX', ARGV[2])
return 1
`

// releaseLua ends the claim of KEYS[1] with the token ARGV[1], or any
// claim in progress when ARGV[1] is empty: 1, or 0 (changing nothing) when
// another claim, a processed delivery, or nothing holds the key.
const releaseLua = `
local v = redis.call('GET', KEYS[1])
if v and (v == 'b:' .. ARGV[1] or (ARGV[1] == '' and string.sub(v, 1, 2) == 'b:')) then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`
