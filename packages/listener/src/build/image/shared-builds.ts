const inProgress = new Map<string, Promise<unknown>>();

/**
 * Runs `build` for `key` unless a build of the same key is in progress, in
 * which case its result is shared: revisions deploying at the same time wait
 * for one image build. Not stopped by any one caller's signal, as others may wait for it.
 */
export function sharedBuild<T>(key: string, build: () => Promise<T>): Promise<T> {
  let building = inProgress.get(key) as Promise<T> | undefined;
  if (!building) {
    building = build().finally(() => inProgress.delete(key));
    inProgress.set(key, building);
  }
  return building;
}
