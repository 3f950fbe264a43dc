import { AIMessage } from "@langchain/core/messages";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** About 40 tokens, streamed one at a time by a fake chat model. */
export const ANSWER = Array.from({ length: 40 }, (_, i) => `w${i} `).join("");

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => {
    // FakeListChatModel streams one character per chunk; split on words instead for ~40 tokens.
    const model = new FakeListChatModel({ responses: [ANSWER] });
    let text = "";
    for await (const chunk of await model.stream(state.messages)) text += String(chunk.content);
    return { messages: [new AIMessage(text)] };
  })
  .addEdge("__start__", "model")
  .compile();
