/** A state message's kind and text: the text parts of its content, or its content as JSON. */
export function messageText(message: unknown): { type: string; text: string } {
  const dict = (typeof message === "object" && message !== null ? message : {}) as { type?: unknown; content?: unknown };
  const type = typeof dict.type === "string" ? dict.type : "message";
  const content = dict.content;
  if (typeof content === "string") return { type, text: content };
  if (Array.isArray(content)) {
    const text = content
      .map((part: unknown) => (typeof part === "string" ? part : (part as { text?: unknown } | null)?.text))
      .filter((part): part is string => typeof part === "string")
      .join("");
    return { type, text: text || JSON.stringify(content) };
  }
  return { type, text: JSON.stringify(content ?? null) };
}
