-- The Lua interpreter workload of bench/run.py: a fixed mix of what Lua programs do, so that
-- the interpreter's own C functions (VM loop, table, string, GC, closures, library calls) run
-- the way they do in real scripts. Deterministic; prints a checksum.
-- usage: lua bench.lua [SCALE]   (SCALE 1 is about 0.1 s uninstrumented on a 2.6 GHz VM)
local scale = tonumber(arg and arg[1]) or 1

-- recursion
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

-- tables: array fill, sort with a Lua comparator (a call per comparison), hash keys
local function tables(n, seed)
  local t, x = {}, seed
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    t[i] = x % 100000
  end
  table.sort(t, function(a, b) return a > b end)
  local h, sum = {}, 0
  for i = 1, n do
    local k = "k" .. (t[i] % 997)
    h[k] = (h[k] or 0) + 1
  end
  for _, v in pairs(h) do sum = sum + v end
  local removed = 0
  while #t > n // 2 do table.remove(t); removed = removed + 1 end
  return sum + removed + t[1]
end

-- strings: build, format, pattern matching, substitution
local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%s;", i, string.rep(string.char(97 + i % 26), i % 7 + 1))
  end
  local s = table.concat(parts)
  local count = 0
  for num, word in s:gmatch("(%d+):(%a+);") do
    if #word > 3 then count = count + tonumber(num) % 13 end
  end
  local up = s:sub(1, 2000):upper():gsub("[AEIOU]", function(c) return c:lower() end)
  return count + #up + (s:find("999:", 1, true) or 0)
end

-- closures and higher-order functions
local function closures(n)
  local function counter()
    local c = 0
    return function(d) c = c + (d or 1); return c end
  end
  local function map(f, t) local r = {} for i = 1, #t do r[i] = f(t[i]) end return r end
  local function filter(p, t) local r = {} for i = 1, #t do if p(t[i]) then r[#r + 1] = t[i] end end return r end
  local function reduce(f, acc, t) for i = 1, #t do acc = f(acc, t[i]) end return acc end
  local t = {}
  for i = 1, n do t[i] = i end
  local c = counter()
  local total = 0
  for round = 1, 10 do
    local sq = map(function(v) return v * v + round end, t)
    local odd = filter(function(v) return v % 2 == 1 end, sq)
    total = total + reduce(function(a, b) return (a + b) % 1000003 end, 0, odd) + c(#odd)
  end
  return total
end

-- objects: metatables, method calls
local function objects(n)
  local Vec = {}
  Vec.__index = Vec
  function Vec.new(x, y) return setmetatable({x = x, y = y}, Vec) end
  function Vec.__add(a, b) return Vec.new(a.x + b.x, a.y + b.y) end
  function Vec:dot(o) return self.x * o.x + self.y * o.y end
  local acc = Vec.new(0, 0)
  local d = 0
  for i = 1, n do
    local v = Vec.new(i % 17, i % 23)
    acc = acc + v
    d = (d + acc:dot(v)) % 1000003
  end
  return d
end

-- coroutines
local function coroutines(n)
  local gen = coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i * 3 % 7) end
  end)
  local s = 0
  for _ = 1, n do s = s + gen() end
  return s
end

local check = 0
for _ = 1, scale do
  check = (check + fib(20)) % 1000003
  check = (check + tables(20000, check)) % 1000003
  check = (check + strings(6000)) % 1000003
  check = (check + closures(5000)) % 1000003
  check = (check + objects(40000)) % 1000003
  check = (check + coroutines(20000)) % 1000003
end
print(string.format("bench.lua scale %d checksum %d", scale, check))
