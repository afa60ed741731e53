// deploy/haproxy/haproxy.cfg is this file's rendering (the replica test checks it): 3 auth, 2 identity and 2 tree
// replicas on their own hosts, each service on its usual port behind the proxy.
import { renderHaproxyConfig } from './haproxy.mjs';

const SERVICES = [
  { service: 'auth', port: 3000, replicas: 3, net: 1 },
  { service: 'identity', port: 3001, replicas: 2, net: 2 },
  { service: 'tree', port: 3002, replicas: 2, net: 3 },
];

/** The example configuration, as committed under deploy/haproxy/. */
export function exampleHaproxyConfig() {
  return renderHaproxyConfig({
    frontends: SERVICES.map((s) => ({
      service: s.service,
      bind: `:${s.port}`,
      servers: Array.from({ length: s.replicas }, (_, i) => ({
        name: `${s.service}-${i + 1}`,
        host: `10.0.${s.net}.${i + 1}`,
        port: s.port,
      })),
    })),
  });
}
