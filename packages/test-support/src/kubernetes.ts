export * from "./fake-kubernetes.js";
export * from "./kube-schemas.js";
