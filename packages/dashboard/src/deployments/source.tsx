import type { Deployment, Revision } from "../api/types";

/** A repository URL as its path, without the host and `.git`: `acme/agent` for `https://github.com/acme/agent.git`. */
export function shortRepo(url: string): string {
  return url
    .replace(/^[a-z+]+:\/\/[^/]+\//i, "")
    .replace(/\.git$/, "")
    .replace(/^\/+/, "");
}

/**
 * Where a deployment's code comes from: "upload" (a folder or tarball), `repository@branch` and the commit
 * its revision built (a git deployment; the commit is known once the build resolved the branch), or the image.
 */
export function SourceSummary({
  deployment,
  revision,
  short = false,
}: {
  deployment: Deployment;
  /** The revision whose commit or image to name; the deployment's own fields otherwise. */
  revision?: Revision;
  /** The repository as its path, without its host (a list's narrow column). */
  short?: boolean;
}) {
  const config = revision?.source_revision_config ?? deployment.source_revision_config;
  const repo = deployment.source_config.repo_url;
  switch (deployment.source) {
    case "internal_source":
      return <span className="source">upload</span>;
    case "repo_host": {
      const sha = config.repo_commit_sha;
      return (
        <span className="source" title={repo ? `${repo}@${config.repo_ref ?? ""}${sha ? ` ${sha}` : ""}` : undefined}>
          <span>{`${repo ? (short ? shortRepo(repo) : repo) : "repository"}@${config.repo_ref ?? "?"}`}</span>
          {sha && (
            <>
              {" "}
              <code data-testid="commit-sha">{sha.slice(0, 7)}</code>
            </>
          )}
        </span>
      );
    }
    default:
      return (
        <span className="source" title={config.image_uri ?? undefined}>
          image {config.image_uri && <code>{config.image_uri}</code>}
        </span>
      );
  }
}
