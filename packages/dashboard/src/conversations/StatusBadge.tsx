/** A status as text (never a colour alone): `interrupted`, `busy`, `success`... */
export function StatusBadge({ status, label }: { status: string; label?: string }) {
  return (
    <span className={`cb-status cb-status-${status}`}>
      {label ? <span className="visually-hidden">{label}: </span> : null}
      {status}
    </span>
  );
}
