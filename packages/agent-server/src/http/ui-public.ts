/**
 * `GET /ui/{name}/{file}`: a bundle's assets, which the reference server serves to anyone.
 * The page loads them with `<script src>` and `<link href>`, which carry no credentials, and
 * they hold the project's component code only, no data.
 */
export function isUiAssetRequest(method: string, pathname: string): boolean {
  return (method === "GET" || method === "HEAD") && pathname.startsWith("/ui/");
}
