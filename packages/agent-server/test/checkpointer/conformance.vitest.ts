// LangGraph's checkpointer conformance suite, run through its library API: the
// package's `validate-checkpointer` CLI (1.1.1) is broken as published.
import { deltaChannelHistoryTests, validate } from "@langchain/langgraph-checkpoint-validation";
import initializer from "./sqlite-initializer.js";

validate(initializer);
// Opt-in upstream (not part of validate), but it checks the pendingWrites order that LangGraph relies on.
deltaChannelHistoryTests(initializer);
