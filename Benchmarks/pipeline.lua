-- wrk script for Benchmarks/pipelining.sh: every write carries PIPELINE_DEPTH GET requests for
-- the URL's path (default 8); wrk counts each response, and writes the next batch once the whole
-- batch is answered.
local depth = tonumber(os.getenv("PIPELINE_DEPTH") or "8")

init = function(args)
  local batch = {}
  for i = 1, depth do batch[i] = wrk.format("GET") end
  pipelined = table.concat(batch)
end

request = function()
  return pipelined
end
