package redisstore

import "github.com/redis/go-redis/v9"

// The store keeps one Redis string per delivery: "b:<token>" while the
// claim with that token is in progress, with the lease as its expiry, and
// "d:<token>" once the claim was completed, with the retention as its
// expiry. Each script reads and writes one key, so it runs atomically, on
// the node that holds the key in a cluster. Each recognises its own claim
// already made (the same token), so that a command the client sends again
// after a lost reply changes nothing more.

// claimScript claims KEYS[1] for the token ARGV[1] with the lease ARGV[2]
// (milliseconds) if no claim holds it: 1 (ClaimNew), 2 (ClaimDone) or 3
// (ClaimBusy).
var claimScript = redis.NewScript(claimLua)

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

// completeScript marks KEYS[1] processed, for the retention ARGV[2]
// (milliseconds), if the claim with the token ARGV[1] holds it: 1, or 0
// when the claim is no longer the token's.
var completeScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v == 'b:' .. ARGV[1] or v == 'd:' .. ARGV[1] then
  redis.call('SET', KEYS[1], 'd:' .. ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
`)

// releaseScript ends the claim of KEYS[1] with the token ARGV[1], or any
// claim in progress when ARGV[1] is empty: 1, or 0 when another claim, or
// a processed delivery, holds the key. A key that holds nothing was
// released already, or its claim lapsed and nobody took it: 1.
var releaseScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return 1 end
if v == 'b:' .. ARGV[1] or (ARGV[1] == '' and string.sub(v, 1, 2) == 'b:') then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
`)
