// The floor: the bench graphs invoked in-process, without any server, with
// and without a checkpointer, one invoke at a time (one core). Run as its own
// process by run.mjs and graphs-vs-floor.mjs: `node floor.mjs [count] [graph,...]`
// (default 2000 invokes of `trivial`); prints one JSON line, the first graph's
// figures at the top level and every graph's under `graphs`.
import { MemorySaver } from "@langchain/langgraph";
import { INPUTS } from "./graphs/inputs.mjs";

const count = Number(process.argv[2] ?? 2000);
const names = (process.argv[3] ?? "trivial").split(",");

async function measure(invoke) {
  for (let i = 0; i < 200; i++) await invoke(i);
  const times = [];
  const begin = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await invoke(i);
    times.push(performance.now() - t);
  }
  const seconds = (performance.now() - begin) / 1000;
  times.sort((a, b) => a - b);
  return { per_second: count / seconds, p50_ms: times[Math.floor(count / 2)], p99_ms: times[Math.floor(count * 0.99)] };
}

const graphs = {};
for (const name of names) {
  const { graph } = await import(`./graphs/${name}.mjs`);
  const checkpointer = new MemorySaver();
  graphs[name] = {
    invoke: await measure(() => graph.invoke(INPUTS[name])),
    // A new thread per invoke, as thread create + wait does.
    invoke_checkpointer: await measure((i) =>
      graph.invoke(INPUTS[name], { configurable: { thread_id: `t${i}`, __pregel_checkpointer: checkpointer } }),
    ),
  };
}
process.stdout.write(`${JSON.stringify({ ...graphs[names[0]], graphs })}\n`);
