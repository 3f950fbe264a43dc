// ESM resolve hook (runs in Node's loader thread): imports of the pinned
// LangChain packages resolve from Berth's own install, whoever imports them.
let anchorUrl;
let pinned;

export function initialize(data) {
  anchorUrl = data.anchorUrl;
  pinned = new RegExp(data.pattern);
}

export async function resolve(specifier, context, nextResolve) {
  if (pinned.test(specifier) && context.parentURL !== anchorUrl) {
    return nextResolve(specifier, { ...context, parentURL: anchorUrl });
  }
  return nextResolve(specifier, context);
}
