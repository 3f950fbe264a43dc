// The floor: the bench graphs invoked in-process, without any server, with
// and without a checkpointer. Run as its own process by run.mjs.
import { MemorySaver } from "@langchain/langgraph";
import { graph as trivial } from "./graphs/trivial.mjs";

const count = Number(process.argv[2] ?? 2000);

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

const checkpointer = new MemorySaver();
const result = {
  invoke: await measure(() => trivial.invoke({ text: "hi" })),
  invoke_checkpointer: await measure((i) =>
    trivial.invoke({ text: "hi" }, { configurable: { thread_id: `t${i}`, __pregel_checkpointer: checkpointer } }),
  ),
};
process.stdout.write(`${JSON.stringify(result)}\n`);
