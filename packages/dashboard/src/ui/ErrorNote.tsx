/** A failed request, said in words (role="alert" reads it out when it appears). */
export function ErrorNote({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p role="alert" className="error">
      {error}
    </p>
  );
}
