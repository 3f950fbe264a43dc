import { PageTitle } from "../ui/PageTitle";

export function TracePage({ id, runId }: { id: string; runId: string }) {
  return <PageTitle title={`Trace ${runId} of ${id}`} />;
}
