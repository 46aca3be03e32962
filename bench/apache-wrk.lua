-- wrk's script for bench/apache.sh: replays a list of request paths, one a line.
--   wrk -t THREADS -c CONNS -d SECS -s bench/apache-wrk.lua URL -- URLS_FILE THREADS
-- Each thread starts at its own place in the list (thread k of n at k/n of it) and goes
-- through it in order, handing the next path to whichever of its connections is free, so
-- the threads do not repeat each other's requests. At the end the main state writes wrk's
-- totals as JSON to the file named by $APACHE_WRK_OUT.
local threads = 0
function setup(thread)
  thread:set("id", threads)
  threads = threads + 1
end

local paths = {}
local i = 0
function init(args)
  for line in io.lines(args[1]) do
    paths[#paths + 1] = line
  end
  i = math.floor(id * #paths / tonumber(args[2]))
end

function request()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end

function done(summary, latency, requests)
  local f = assert(io.open(os.getenv("APACHE_WRK_OUT"), "w"))
  local e = summary.errors
  f:write(string.format(
    '{"duration_us": %d, "requests": %d, "bytes": %d, "connect": %d, "read": %d, '
      .. '"write": %d, "status": %d, "timeout": %d, "latency_p50_us": %d, "latency_p99_us": %d}\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(99)))
  f:close()
end
