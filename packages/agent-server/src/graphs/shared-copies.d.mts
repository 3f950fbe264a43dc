/** Berth's copy of a package shared by version: where it is installed and its version. */
export interface SharedPackage {
  root: string;
  version: string;
}

export function sharedPackageOf(specifier: string, shared: Record<string, SharedPackage>): string | undefined;

export function isSameVersionCopy(name: string, file: string, shared: Record<string, SharedPackage>): boolean;
