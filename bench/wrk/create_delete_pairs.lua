-- wrk script: POST a resource, then DELETE what the POST created, over and
-- over (each connection alternates). Env:
--   WRK_BODY_FILE   JSON body of the POST (required)
--   WRK_COLLECTION  collection path, e.g. /v1/clusters (default)
--   WRK_CREATED     status of an accepted POST (202 for clusters, 201 for templates)
-- Prints one line "WRKJSON {...}" with requests, accepted POSTs, 204 DELETEs,
-- both per second, latency percentiles (POSTs and DELETEs together) and the
-- status codes seen.
local f = assert(io.open(os.getenv("WRK_BODY_FILE"), "r"))
local post_body = f:read("*a")
f:close()
local collection = os.getenv("WRK_COLLECTION") or "/v1/clusters"
local created = tonumber(os.getenv("WRK_CREATED") or "202")

queue = {}
codes = {}
posts, deletes = 0, 0
local threads = {}

function setup(thread) table.insert(threads, thread) end

function request()
  local u = table.remove(queue)
  if u then
    return wrk.format("DELETE", collection .. "/" .. u, nil, nil)
  end
  local h = {}
  for k, v in pairs(wrk.headers) do h[k] = v end
  h["Content-Type"] = "application/json"
  return wrk.format("POST", collection, h, post_body)
end

function response(status, headers, body)
  codes[status] = (codes[status] or 0) + 1
  if status == created then
    posts = posts + 1
    local u = string.match(body, '"uuid"%s*:%s*"([%x%-]+)"')
    if u then table.insert(queue, u) end
  elseif status == 204 then
    deletes = deletes + 1
  end
end

function done(summary, latency, requests)
  local agg, np, nd = {}, 0, 0
  for _, t in ipairs(threads) do
    local c = t:get("codes")
    if c then for k, v in pairs(c) do agg[k] = (agg[k] or 0) + v end end
    np = np + (t:get("posts") or 0)
    nd = nd + (t:get("deletes") or 0)
  end
  local parts = {}
  for k, v in pairs(agg) do table.insert(parts, string.format('"%d":%d', k, v)) end
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_s":%.3f,"rps":%.2f,"accepted_per_s":%.2f,"pairs_per_s":%.2f,' ..
    '"posts":%d,"deletes":%d,"bytes":%d,' ..
    '"lat_ms":{"p50":%.2f,"p90":%.2f,"p99":%.2f,"max":%.2f,"mean":%.2f},' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},"codes":{%s}}\n',
    summary.requests, secs, summary.requests / secs, np / secs, nd / secs, np, nd, summary.bytes,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, latency.mean / 1000,
    e.connect, e.read, e.write, e.status, e.timeout, table.concat(parts, ",")))
end
