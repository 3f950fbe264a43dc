import { type ReactNode, useId } from "react";

/** A titled region: its heading names it for assistive technology (and for tests finding it by role). */
export function Section({ title, className, children }: { title: string; className?: string; children: ReactNode }) {
  const headingId = useId();
  return (
    <section className={className} aria-labelledby={headingId}>
      <h4 id={headingId}>{title}</h4>
      {children}
    </section>
  );
}
