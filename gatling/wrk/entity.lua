-- wrk script of gatling/paired.sh (ratio, cost) and others: v0 entity requests over a fixed key space, closed loop (each connection sends its
-- next request when the last one was answered), with the answers counted by status class.
--
-- Settings come from the environment, because wrk hands script arguments only to the threads, not to setup():
--   WRK_METHOD      PUT or GET (default GET)
--   WRK_KEYS        size of the key space, ids k0 .. k(N-1) (default 20000)
--   WRK_VALUE_SIZE  bytes of every PUT body (default 1024)
--   WRK_REPLICAS    ack/from sent with every request, e.g. 2/3; empty: the server's default
--   WRK_HOSTS       host:port,host:port,...: thread i connects to host i mod n (load spread over a cluster's
--                   nodes); empty: every thread connects to the URL given to wrk
-- PUTs walk the key space in order (thread t of T writes keys t, t+T, t+2T, ...), so a warm-up PUT run of at least
-- N requests preloads every key a later GET run reads; GETs pick keys uniformly at random.
--
-- done() prints one line "ratio-summary key=value ..." that the scripts parse: requests, duration_us,
-- socket errors (connect, read, write, timeout), answers by class (2xx, 404, other 4xx, 5xx), latency p50/p99 (us).

local threads = {}

function setup(thread)
  local hosts = os.getenv("WRK_HOSTS") or ""
  local index = #threads
  if hosts ~= "" then
    local list = {}
    for host in string.gmatch(hosts, "[^,]+") do table.insert(list, host) end
    local host, port = string.match(list[(index % #list) + 1], "^(.+):(%d+)$")
    thread.addr = wrk.lookup(host, port)[1]
  end
  thread:set("thread_index", index)
  table.insert(threads, thread)
end

local method, keys, body, query_suffix, next_key, key_step
-- globals, not locals: done() reads them from each thread with thread:get()
n2xx, n404, n4xx, n5xx = 0, 0, 0, 0

function init(args)
  method = os.getenv("WRK_METHOD") or "GET"
  keys = tonumber(os.getenv("WRK_KEYS") or "20000")
  local replicas = os.getenv("WRK_REPLICAS") or ""
  query_suffix = replicas ~= "" and ("&replicas=" .. replicas) or ""
  if method == "PUT" then
    body = string.rep("v", tonumber(os.getenv("WRK_VALUE_SIZE") or "1024"))
  end
  -- thread_index is set by setup(); every thread starts at its own offset so that the threads together cover the keys
  next_key = thread_index or 0
  key_step = tonumber(os.getenv("WRK_THREADS") or "1")
  math.randomseed(os.time() + (thread_index or 0))
end

function request()
  local key
  if method == "PUT" then
    key = next_key % keys
    next_key = next_key + key_step
  else
    key = math.random(0, keys - 1)
  end
  return wrk.format(method, "/v0/entity?id=k" .. key .. query_suffix, nil, body)
end

function response(status, headers, answer)
  if status < 300 then
    n2xx = n2xx + 1
  elseif status == 404 then
    n404 = n404 + 1
  elseif status >= 500 then
    n5xx = n5xx + 1
  else
    n4xx = n4xx + 1
  end
end

function done(summary, latency, requests)
  local c = { n2xx = 0, n404 = 0, n4xx = 0, n5xx = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(c) do c[name] = c[name] + (thread:get(name) or 0) end
  end
  io.write(string.format(
    "ratio-summary requests=%d duration_us=%d errors_connect=%d errors_read=%d errors_write=%d errors_timeout=%d " ..
    "status_2xx=%d status_404=%d status_4xx=%d status_5xx=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, summary.errors.connect, summary.errors.read, summary.errors.write,
    summary.errors.timeout, c.n2xx, c.n404, c.n4xx, c.n5xx, latency:percentile(50), latency:percentile(99)))
end
