import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";

const PLUGINS = [remarkGfm];

/** Links open in a new tab and send no Referer: the page's URL holds the deployment and the thread. */
const COMPONENTS: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noreferrer" />,
};

/**
 * A message's text as Markdown (GitHub's flavour: tables, task lists, strikethrough). Raw HTML in the text is
 * shown as text, never parsed (react-markdown's default), and unsafe link protocols are dropped. Memoised: while
 * a reply streams only the message that grows is parsed again.
 */
export const MarkdownText = memo(function MarkdownText({ text, className }: { text: string; className?: string }) {
  return (
    <div className={className}>
      <ReactMarkdown remarkPlugins={PLUGINS} components={COMPONENTS}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
