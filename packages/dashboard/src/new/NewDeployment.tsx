import { PageTitle } from "../ui/PageTitle";
import { FolderForm } from "./FolderForm";
import { GitForm } from "./GitForm";

export function NewDeployment() {
  return (
    <>
      <PageTitle title="New deployment" />
      <div className="columns">
        <FolderForm />
        <GitForm />
      </div>
    </>
  );
}
