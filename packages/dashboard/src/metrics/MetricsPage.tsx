import { PageTitle } from "../ui/PageTitle";

export function MetricsPage({ id }: { id: string }) {
  return <PageTitle title={`Metrics of ${id}`} />;
}
