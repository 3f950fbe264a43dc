import { PageTitle } from "../ui/PageTitle";

export function TracesPage({ id }: { id: string }) {
  return <PageTitle title={`Traces of ${id}`} />;
}
