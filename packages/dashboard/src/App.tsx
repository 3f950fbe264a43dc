import { useMemo, useState } from "react";
import { ApiClient } from "./api/client";
import { SessionContext } from "./api/context";
import { KeyForm } from "./auth/KeyForm";
import { type Credentials, clearCredentials, loadCredentials, saveCredentials } from "./auth/session";
import { ConversationsPage } from "./deployments/ConversationsPage";
import { DeploymentList } from "./deployments/DeploymentList";
import { DeploymentPage } from "./deployments/DeploymentPage";
import { MetricsPage } from "./metrics/MetricsPage";
import { NewDeployment } from "./new/NewDeployment";
import { hrefOf, type Route, useRoute } from "./router";
import { StudioPage } from "./studio/StudioPage";
import { TracePage } from "./traces/TracePage";
import { TracesPage } from "./traces/TracesPage";
import { BerthVersion } from "./ui/BerthVersion";
import { ErrorBoundary } from "./ui/ErrorBoundary";

export function App() {
  const [credentials, setCredentials] = useState<Credentials | undefined>(loadCredentials);
  const [notice, setNotice] = useState<string>();
  const route = useRoute();

  const session = useMemo(() => {
    if (!credentials) return undefined;
    const api = new ApiClient(credentials, () => {
      clearCredentials();
      setCredentials(undefined);
      setNotice("The control plane refused the key (401): enter a valid one.");
    });
    return { api, credentials };
  }, [credentials]);

  if (!session) {
    return (
      <KeyForm
        notice={notice}
        onSubmit={(entered) => {
          saveCredentials(entered);
          setNotice(undefined);
          setCredentials(entered);
        }}
      />
    );
  }
  const signOut = () => {
    clearCredentials();
    setCredentials(undefined);
  };
  return (
    <SessionContext.Provider value={session}>
      <header className="bar">
        <a className="brand" href={hrefOf.list()}>
          Berth
        </a>
        <nav aria-label="Main">
          <a href={hrefOf.list()}>Deployments</a>
          <a href={hrefOf.new()}>New deployment</a>
        </nav>
        <span className="who">
          {session.credentials.tenantId ? `Workspace ${session.credentials.tenantId}` : "Key's default workspace"}
        </span>
        <BerthVersion />
        <button type="button" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        <ErrorBoundary key={window.location.hash.split("?")[0]}>
          <Page route={route} />
        </ErrorBoundary>
      </main>
    </SessionContext.Provider>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "list":
      return <DeploymentList />;
    case "new":
      return <NewDeployment />;
    case "deployment":
      return <DeploymentPage key={route.id} id={route.id} />;
    case "conversations":
      return <ConversationsPage key={route.id} id={route.id} />;
    case "studio":
      return <StudioPage key={route.id} id={route.id} />;
    case "traces":
      return <TracesPage key={route.id} id={route.id} />;
    case "trace":
      return <TracePage key={`${route.id}/${route.runId}`} id={route.id} runId={route.runId} />;
    case "metrics":
      return <MetricsPage key={route.id} id={route.id} />;
    case "unknown":
      return (
        <>
          <h1>Not found</h1>
          <p>
            No page at {route.hash}. <a href={hrefOf.list()}>Back to the deployments</a>
          </p>
        </>
      );
  }
}
