package redisstore

// The journal's scripts. As the callback store's (see scripts.go), they
// are sent whole, with EVAL, every time. They read the server's clock, so
// that the replicas of a service agree on when an entry expires whatever
// their own clocks say; redis.replicate_commands lets Redis 3.2 and 4
// replicate a script that does so by its writes (later versions always
// do, and ignore the call). A script accesses the keys of the names an
// entry holds and of the entries the index lists, which its caller cannot
// name: with the hash tag the prefix must have in a cluster, they are in
// the slot of the keys it declares.
//
// The index keys are declared in the order of journalKeys: KEYS[1] the
// expiry index, KEYS[2] the entries by time, KEYS[3] the open entries,
// KEYS[4] the migration's watermark: every member of the expiry index
// scored below it holds the index data of its records (see
// journalMigrate). It is never above the expiry a write of the current
// millisecond gets, so that a write of an earlier release, which moves
// its entry to that score, lands at or above it. An entry's hash holds, besides its records ("r:"
// fields) and names ("n:" fields), its index data: "at", its time
// (milliseconds of the journal's clock); "stage"; "ref"; and "count", how
// many records it held after this release's last Write, which tells an
// earlier release's records apart. An entry without "stage" has no index
// data that a filter may trust (an earlier release wrote it, or wrote a
// record to it): every stage and reference filter selects it, and the
// journal decides.

// journalLib holds the functions the scripts share: now, the server's
// time in milliseconds; num, a number as Redis reads it back; keep, which
// extends the expiry of the sorted sets to exp (unless a store of a
// longer retention set a later one: the watermark is set with its own); forget, which takes key
// out of every index; trim, which forgets the entries that expired before
// t; count, how many records an entry holds; stale, whether it holds
// records its "count" does not count (and how many); records, its
// records.
const journalLib = `
if redis.replicate_commands then redis.replicate_commands() end
local function now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function num(x) return string.format('%.0f', x) end
local function keep(exp, ret)
  if redis.call('PTTL', KEYS[1]) < ret then
    for i = 1, 3 do redis.call('PEXPIREAT', KEYS[i], num(exp)) end
  end
end
local function forget(key)
  for i = 1, 3 do redis.call('ZREM', KEYS[i], key) end
end
local function trim(t, limit)
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. num(t), 'LIMIT', 0, limit)) do
    forget(k)
  end
end
local function count(h)
  local n = 0
  for _, f in ipairs(redis.call('HKEYS', h)) do
    if string.sub(f, 1, 2) == 'r:' then n = n + 1 end
  end
  return n
end
local function stale(h)
  local n = count(h)
  return n > 0 and tonumber(redis.call('HGET', h, 'count')) ~= n, n
end
local function records(h)
  local out, all = {}, redis.call('HGETALL', h)
  for i = 1, #all, 2 do
    if string.sub(all[i], 1, 2) == 'r:' then out[#out + 1] = all[i + 1] end
  end
  return out
end
`

// journalWriteLua makes a Step (see JournalStore.Write for its ARGV).
// KEYS[5] is the entry's hash, KEYS[6] the hash of the entry it peeks at,
// KEYS[7...] its names. It returns {taken, records, peeked}, taken ""
// unless an Exclusive Step found a name of another entry (then it wrote
// nothing). Besides the Step it trims the index of entries that expired
// (a hundred at most: each Write trims more than it adds), keeps every
// key at least one retention, and, when the few entries at or above the
// migration's watermark all hold their index data (no earlier release
// wrote since), moves the watermark up to its own entry's expiry: so
// that, once no replica of an earlier release writes, each migration
// looks at the entries of a millisecond or two.
const journalWriteLua = journalLib + `
local key, prefix, ret = ARGV[1], ARGV[5], tonumber(ARGV[4])
if ARGV[9] == '1' then
  for i = 7, #KEYS do
    local k = redis.call('GET', KEYS[i])
    if k and k ~= key and redis.call('EXISTS', prefix .. 'e:' .. k) == 1 then return {k, {}, {}} end
  end
end
local t = now()
local exp = t + ret
local e = KEYS[5]
local n, names = 0, {}
for _, f in ipairs(redis.call('HKEYS', e)) do
  local p = string.sub(f, 1, 2)
  if p == 'r:' then n = n + 1 elseif p == 'n:' then names[f] = true end
end
local fresh = n == 0
local d = redis.call('HMGET', e, 'at', 'stage', 'ref', 'count')
if d[2] and tonumber(d[4]) ~= n then -- an earlier release wrote a record since
  redis.call('HDEL', e, 'stage')
  d[2] = false
end
local wrote = redis.call('HSETNX', e, ARGV[2], ARGV[3]) == 1
if wrote then n = n + 1 end
local at = tonumber(ARGV[6]) -- the time of a record written; a Step that wrote none keeps the entry's
if d[1] and (not wrote or tonumber(d[1]) > at) then at = tonumber(d[1]) end
local set = {'at', num(at), 'count', n}
if fresh or (d[2] and tonumber(ARGV[7]) > tonumber(d[2])) then set[#set + 1], set[#set + 2] = 'stage', ARGV[7] end
if ARGV[8] ~= '' and (not d[3] or d[3] == '') then set[#set + 1], set[#set + 2] = 'ref', ARGV[8] end
for i = 7, #KEYS do
  local f = string.sub(KEYS[i], #prefix + 1)
  redis.call('SET', KEYS[i], key)
  redis.call('PEXPIREAT', KEYS[i], num(exp))
  names[f] = nil
  set[#set + 1], set[#set + 2] = f, ''
end
for f in pairs(names) do
  local name = prefix .. f
  if redis.call('GET', name) == key then
    redis.call('PEXPIREAT', name, num(exp))
  else
    redis.call('HDEL', e, f)
  end
end
redis.call('HMSET', e, unpack(set))
redis.call('PEXPIREAT', e, num(exp))
trim(t, 100)
redis.call('ZADD', KEYS[1], num(exp), key)
redis.call('ZADD', KEYS[2], num(at), key)
redis.call('ZADD', KEYS[3], num(at), key)
local above = redis.call('ZRANGEBYSCORE', KEYS[1], redis.call('GET', KEYS[4]) or '-inf', '+inf', 'LIMIT', 0, 10)
local clean = #above < 10
for _, k in ipairs(above) do clean = clean and (k == key or not stale(prefix .. 'e:' .. k)) end
if clean then redis.call('SET', KEYS[4], num(math.max(exp, tonumber(redis.call('GET', KEYS[4]) or exp))), 'PX', num(ret)) end
keep(exp, ret)
local recs, peeked = {}, {}
if ARGV[10] == '1' then recs = records(e) end
if ARGV[11] == '1' then peeked = records(KEYS[6]) end
return {'', recs, peeked}
`

// journalLookupLua returns the key that the name KEYS[1] points at, if
// that entry exists (ARGV[1] is the store's prefix), or nil.
const journalLookupLua = `
local key = redis.call('GET', KEYS[1])
if key and redis.call('EXISTS', ARGV[1] .. 'e:' .. key) == 1 then return key end
return false
`

// journalCloseLua takes the entry ARGV[1] (whose hash is KEYS[5]) out of
// the open entries if it holds ARGV[2] records, or none.
const journalCloseLua = journalLib + `
local n = count(KEYS[5])
if n == 0 or n == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[3], ARGV[1]) end
return 1
`

// journalMigrate defines migrate(prefix, ret, limit), which gives index
// data to the entries an earlier release wrote, or wrote to, since the
// watermark: the members of the expiry index at or above it (any write
// moves an entry there) that hold records their "count" does not count. Each
// such entry gets the time of its last write as the server saw it (its
// expiry less the retention ret) if later than its own, loses its stage
// (so that every filter selects it), and is opened. An earlier release's
// write that adds no record (a record it holds, a name) changes nothing
// in the index; nor does one made while the server's clock went back
// past the watermark. It looks at limit members (more, when the last of
// them shares its score with others), after trimming the entries that
// expired, and returns true when it got to the top of the index, false
// when more wait. The
// watermark moves past what it looked at, but not past the expiry a write
// of the current millisecond gets, unless entries above wait (and so
// were written later, by a store of the same retention); it never moves
// down.
const journalMigrate = `
local function migrate(prefix, ret, limit)
  local t = now()
  trim(t, 1000)
  local mark = redis.call('GET', KEYS[4])
  local batch = redis.call('ZRANGEBYSCORE', KEYS[1], mark or '-inf', '+inf', 'WITHSCORES', 'LIMIT', 0, limit)
  if #batch == 0 then return true end
  local last = batch[#batch]
  if #batch == 2 * limit then
    for _, m in ipairs(redis.call('ZRANGEBYSCORE', KEYS[1], last, last, 'WITHSCORES')) do batch[#batch + 1] = m end
  end
  for i = 1, #batch, 2 do
    local k, s = batch[i], tonumber(batch[i + 1])
    local h = prefix .. 'e:' .. k
    local old, n = stale(h)
    if old then
      local at, was = s - ret, tonumber(redis.call('HGET', h, 'at'))
      if was and was > at then at = was end
      redis.call('HDEL', h, 'stage')
      redis.call('HMSET', h, 'at', num(at), 'count', n)
      redis.call('ZADD', KEYS[2], num(at), k)
      redis.call('ZADD', KEYS[3], num(at), k)
    end
  end
  local more = #redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. last, '+inf', 'LIMIT', 0, 1) > 0
  local to = tonumber(last) + 1
  if not more then to = math.min(to, t + ret) end
  local top = tonumber(redis.call('ZREVRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2])
  redis.call('SET', KEYS[4], num(math.max(to, tonumber(mark or to))), 'PX', num(math.max(1, top - t)))
  keep(top, ret)
  return not more
end
`

// journalPageLua reads a page of the entries by time (KEYS[2]), or of
// the open entries (KEYS[3]) when ARGV[2] is "1", newest first, from
// after the cursor (the score ARGV[5] and member ARGV[6]; "" for none).
// ARGV[1] is the prefix; ARGV[3] is how many entries a page holds at most
// and ARGV[4] how many it looks at; ARGV[7] and ARGV[8] the lowest and
// highest time selected ("" for no bound); ARGV[9] the prefix of the
// references selected; ARGV[10] the stages selected, a comma-separated
// list ("" for any). ARGV[11], when not "", makes it migrate first, that
// many members at most, with the retention ARGV[12]. It returns {done,
// score, member, entries...}: done is 1 when no entry is left, 0 when
// more are, 2 when the migration did not finish (and no page was read);
// score and member are the cursor of the next page; each entry is {key,
// records...}. An entry whose hash is gone (it expired before its place
// in the index was trimmed) is dropped from the index.
const journalPageLua = journalLib + journalMigrate + `
local prefix, set, page, look = ARGV[1], KEYS[2], tonumber(ARGV[3]), tonumber(ARGV[4])
if ARGV[11] ~= '' and not migrate(prefix, tonumber(ARGV[12]), tonumber(ARGV[11])) then return {2, '', ''} end
if ARGV[2] == '1' then set = KEYS[3] end
local function less(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
local start = 0
if ARGV[5] ~= '' then
  local lo = redis.call('ZCOUNT', set, '(' .. ARGV[5], '+inf')
  local hi = lo + redis.call('ZCOUNT', set, ARGV[5], ARGV[5])
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if less(redis.call('ZREVRANGE', set, mid, mid)[1], ARGV[6]) then hi = mid else lo = mid + 1 end
  end
  start = lo
elseif ARGV[8] ~= '' then
  start = redis.call('ZCOUNT', set, '(' .. ARGV[8], '+inf')
end
local stages = nil
if ARGV[10] ~= '' then
  stages = {}
  for s in string.gmatch(ARGV[10], '[^,]+') do stages[s] = true end
end
local rp = ARGV[9]
local function selects(h)
  if not stages and rp == '' then return true end
  local d = redis.call('HMGET', h, 'stage', 'ref')
  if not d[1] then return true end
  return (not stages or stages[d[1]]) and string.sub(d[2] or '', 1, #rp) == rp
end
local from = tonumber(ARGV[7])
local items = redis.call('ZREVRANGE', set, start, start + look - 1, 'WITHSCORES')
local out = {1, '', ''}
for i = 1, #items, 2 do
  local k, s = items[i], items[i + 1]
  if from and tonumber(s) < from then return out end
  out[2], out[3] = s, k
  local h = prefix .. 'e:' .. k
  if selects(h) then
    local recs = records(h)
    if #recs == 0 then
      forget(k)
    else
      table.insert(recs, 1, k)
      out[#out + 1] = recs
      if #out - 3 == page then
        out[1] = 0
        return out
      end
    end
  end
end
if #items == 2 * look then out[1] = 0 end
return out
`
