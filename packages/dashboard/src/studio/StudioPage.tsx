import { PageTitle } from "../ui/PageTitle";

export function StudioPage({ id }: { id: string }) {
  return <PageTitle title={`Studio of ${id}`} />;
}
