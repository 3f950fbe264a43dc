export { buildLangGraphJsApiImage, langGraphJsApiImageTag } from "./build/image/langgraphjs-api-image.js";
export { removeScaleOutServices } from "./compute/container/scale-out-services.js";
export { connectEngine } from "./engine/docker-engine.js";
export { renderForReview } from "./listener/placements/cluster/cluster-rollouts.js";
export { ControlPlaneError, HttpLink, type HttpLinkOptions } from "./listener/http-link.js";
export type { ControlPlaneLink } from "./listener/link.js";
export { type ListenerOptions, type RunningListener, startListener } from "./listener/listener.js";
export {
  clusterLogPollMs,
  clusterNetworkFromEnv,
  clusterSettings,
  type CommandSettings,
  commandSettings,
  LISTENER_SETTINGS,
  type ListenerSetting,
} from "./listener/settings.js";
export { registryStorageOf, startRegistryProcess } from "./process/registry-process.js";
