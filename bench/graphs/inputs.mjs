/** The input of one run of each bench graph, for the floor and the load generator alike. */
export const INPUTS = {
  trivial: { text: "hi" },
  messages: { messages: [{ type: "human", content: "hi" }] },
  tools: { messages: [{ type: "human", content: "add 2 and 3" }] },
};
