import { useEffect, useState } from "react";
import { loadServerInfo } from "../api/info";

/** "Berth 0.1.0": the version of the control plane serving the page; nothing while unknown. */
export function BerthVersion() {
  const [version, setVersion] = useState<string>();
  useEffect(() => {
    let current = true;
    loadServerInfo()
      .then((info) => current && setVersion(info.version))
      // An older control plane without /info: the header simply shows no version.
      .catch(() => {});
    return () => {
      current = false;
    };
  }, []);
  return version ? (
    <span className="version" title="Berth's version (GET /info)">
      Berth {version}
    </span>
  ) : null;
}
