import { AIMessage, AIMessageChunk } from "@langchain/core/messages";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import { MessagesAnnotation, StateGraph } from "@langchain/langgraph";

/** 40 tokens, streamed one at a time by a fake chat model. */
const TOKENS = Array.from({ length: 40 }, (_, i) => `w${i} `);

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("model", async (state) => {
    const model = new FakeStreamingChatModel({ chunks: TOKENS.map((content) => new AIMessageChunk({ content })) });
    let text = "";
    for await (const chunk of await model.stream(state.messages)) text += String(chunk.content);
    return { messages: [new AIMessage(text)] };
  })
  .addEdge("__start__", "model")
  .compile();
