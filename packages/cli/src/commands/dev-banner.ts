/** Where LangGraph Studio (a web page) opens a server given its address. */
const STUDIO = "https://smith.langchain.com/studio/?baseUrl=";

/** `berth dev`'s start banner (stderr): where the API, its docs and Studio are. */
export function devBanner(url: string): string {
  return [
    "",
    `berth dev: ready`,
    `  API:     ${url}`,
    `  Docs:    ${url}/docs`,
    `  Studio:  ${STUDIO}${encodeURIComponent(url)}`,
    "",
    "",
  ].join("\n");
}
