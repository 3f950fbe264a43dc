import { type ReactNode, useEffect, useRef } from "react";

/**
 * The page's h1: it names the tab and takes the focus when the page opens, so
 * a screen reader announces the new page after a hash navigation.
 */
export function PageTitle({ title, children }: { title: string; children?: ReactNode }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Berth`;
    heading.current?.focus();
  }, [title]);
  return (
    <h1 ref={heading} tabIndex={-1}>
      {children ?? title}
    </h1>
  );
}
