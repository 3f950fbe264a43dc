/**
 * What deployments may not reach on any compute: private, shared (CGNAT),
 * loopback, link-local (cloud metadata services), benchmarking, multicast
 * and reserved IPv4 ranges. The host's LAN, other deployments' networks, the
 * engines' bridges and a cluster's pods and Services lie in them.
 */
export const NON_PUBLIC_IPV4_RANGES: readonly string[] = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "224.0.0.0/3",
];

/** Loopback, unique-local, link-local and multicast IPv6 ranges. */
export const NON_PUBLIC_IPV6_RANGES: readonly string[] = ["::1/128", "fc00::/7", "fe80::/10", "ff00::/8"];
