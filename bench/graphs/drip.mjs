import { Annotation, StateGraph } from "@langchain/langgraph";

/**
 * Tokens at a pace, as custom stream events: `{i, token}` for i = 0 … `count`-1 (40 by default), one every `delay_ms`
 * (100), then the text in the state. A run streams long enough for many subscribers to join it while it emits, and each
 * subscriber can check it got every token once, in order (classic `stream_mode: "custom"`, protocol v2 channel `custom`).
 */
const State = Annotation.Root({
  delay_ms: Annotation(),
  count: Annotation(),
  text: Annotation(),
});

export const graph = new StateGraph(State)
  .addNode("drip", async (state, config) => {
    let text = "";
    for (let i = 0; i < (state.count ?? 40); i++) {
      await new Promise((resolve) => setTimeout(resolve, state.delay_ms ?? 100));
      const token = `w${i} `;
      config.writer?.({ i, token });
      text += token;
    }
    return { text };
  })
  .addEdge("__start__", "drip")
  .compile();
