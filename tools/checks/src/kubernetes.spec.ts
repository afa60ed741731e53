// The Kubernetes manifests (deploy/kubernetes) checked offline: every object against the Kubernetes schemas
// (kubernetes-models), and against what the services really read and serve: their env schemas, their ports, the
// probes' paths, who calls whom (the NetworkPolicies), the migrate entry points. No cluster is needed.
// The variables the manifests leave to their defaults are listed in docs/deployment.md; regenerate that list after
// adding a variable: UPDATE_DOCS=1 npx jest -c tools/checks/jest.config.mjs kubernetes
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { ConfigMap, Service, type IContainer, type IEnvVar, type IPodSpec } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Ingress, NetworkPolicy, type INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1';
import type { ILabelSelector } from '@kubernetes-models/apimachinery/apis/meta/v1/LabelSelector';
import { commonEnv, type EnvSchema } from '@gatehouse/config';
/* eslint-disable @nx/enforce-module-boundaries -- reads the apps' env schemas to check the manifests against them */
import { authEnv } from '@gatehouse/token-server';
import { identityEnv } from '../../../apps/identity/src/config.js';
import { treeEnv } from '../../../apps/tree/src/config.js';
import { normalizeTable } from './markdown-table.js';
/* eslint-enable @nx/enforce-module-boundaries */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = path.join(root, 'deploy/kubernetes');
const docPath = path.join(root, 'docs/deployment.md');
const START = '<!-- k8s-defaults:start -->';
const END = '<!-- k8s-defaults:end -->';

type Name = 'auth' | 'identity' | 'tree';
const services: Record<Name, { schema: EnvSchema; port: number; portVar: string }> = {
  auth: { schema: { ...commonEnv, ...authEnv }, port: 3000, portVar: 'AUTH_PORT' },
  identity: { schema: { ...commonEnv, ...identityEnv }, port: 3001, portVar: 'IDENTITY_PORT' },
  tree: { schema: { ...commonEnv, ...treeEnv }, port: 3002, portVar: 'TREE_PORT' },
};
const names = Object.keys(services) as Name[];

/** Read by the image (docker/Dockerfile's CMD and healthcheck), not by the services' env schemas. */
const imageVars = new Set(['SERVICE']);

/**
 * What an operator must decide for a cluster, set in each Deployment even where the code has a default: the
 * development defaults (a generated key in DATA_DIR, http://localhost issuer, no proxy trusted, 127.0.0.1 for auth,
 * in-memory rate limits) are wrong with several replicas behind an ingress.
 */
const mustSet: Record<Name, string[]> = {
  auth: ['DATABASE_URL', 'SECRET_ENCRYPTION_KEY', 'ISSUER', 'TRUST_PROXY', 'REDIS_URL', 'AUTH_PORT'],
  identity: [
    'DATABASE_URL',
    'SECRET_ENCRYPTION_KEY',
    'ISSUER',
    'TRUST_PROXY',
    'REDIS_URL',
    'AUTH_URL',
    'IDENTITY_PORT',
  ],
  tree: ['DATABASE_URL', 'TRUST_PROXY', 'REDIS_URL', 'AUTH_URL', 'TREE_PORT'],
};

/** Who may connect to each service besides the ingress controller: the Gatehouse services that call it. */
const callers: Record<Name, Name[]> = { auth: ['identity', 'tree'], identity: [], tree: [] };
const INGRESS_PEER = 'ingress-controller';

// ---- loading

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [key: string]: unknown;
}
interface Loaded {
  file: string;
  obj: Obj;
}

const models: Record<string, { new (data: never): { validate(): void } }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
};

const manifestFiles = readdirSync(dir)
  .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
  .sort();

function load(): Loaded[] {
  const out: Loaded[] = [];
  for (const file of manifestFiles) {
    for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
      if (doc.errors.length) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join('; ')}`);
      const obj = doc.toJS({ maxAliasCount: 0 }) as Obj | null;
      if (obj !== null) out.push({ file, obj });
    }
  }
  return out;
}
const loaded = load();
const all = loaded.map((l) => l.obj);

function only<T>(kind: string, name: string): T {
  const found = all.filter((o) => o.kind === kind && o.metadata.name === name);
  if (found.length !== 1) throw new Error(`expected one ${kind} ${name}, found ${found.length}`);
  return found[0] as unknown as T;
}
const deployment = (s: Name) => only<Deployment>('Deployment', `gatehouse-${s}`);
const job = () => only<Job>('Job', 'gatehouse-migrate');
const configMap = () => only<ConfigMap>('ConfigMap', 'gatehouse');

const podSpec = (d: { spec?: { template: { spec?: IPodSpec } } }): IPodSpec => {
  const spec = d.spec?.template.spec;
  if (!spec) throw new Error('no pod spec');
  return spec;
};
const container = (s: Name): IContainer => {
  const cs = podSpec(deployment(s)).containers;
  expect(cs).toHaveLength(1);
  return cs[0];
};
const envOf = (c: IContainer): Map<string, IEnvVar> => {
  const env = new Map<string, IEnvVar>();
  for (const e of c.env ?? []) {
    if (env.has(e.name)) throw new Error(`${c.name}: ${e.name} set twice`);
    env.set(e.name, e);
  }
  return env;
};

/** matchLabels only: the manifests use no matchExpressions, and the check refuses them rather than guess. */
function selects(selector: ILabelSelector | undefined, labels: Record<string, string>): boolean {
  if (selector?.matchExpressions?.length) throw new Error('matchExpressions are not checked here');
  return Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

// ---- the documented defaults

/** The variables each Deployment leaves to the service's default, as docs/deployment.md lists them. */
function defaultsBlock(): string {
  const lines = ['| service | variables left to their defaults (README, Configuration) |', '|---|---|'];
  for (const s of names) {
    const env = envOf(container(s));
    const unset = Object.keys(services[s].schema).filter((v) => !env.has(v));
    lines.push(`| ${s} | ${unset.map((v) => `\`${v}\``).join(', ')} |`);
  }
  return lines.join('\n');
}

// ---- the tests

describe('Kubernetes manifests (deploy/kubernetes)', () => {
  it('are listed by the kustomization, one file each, and ship no Secret', () => {
    const k = parseAllDocuments(readFileSync(path.join(dir, 'kustomization.yaml'), 'utf8'))[0].toJS() as {
      resources: string[];
    };
    expect([...k.resources].sort()).toEqual(manifestFiles);
    // Secrets are referenced (secretKeyRef), never written into the repository.
    expect(all.filter((o) => o.kind === 'Secret')).toEqual([]);
  });

  it('validate against the Kubernetes schemas (kubernetes-models)', () => {
    const seen = new Set<string>();
    for (const { file, obj } of loaded) {
      const key = `${obj.apiVersion}/${obj.kind}`;
      const Model = models[key];
      if (!Model) throw new Error(`${file}: no schema checked for ${key}`);
      try {
        new Model(obj as never).validate();
      } catch (err) {
        throw new Error(`${file}: ${key} ${obj.metadata.name}: ${(err as Error).message}`);
      }
      const id = `${obj.kind}/${obj.metadata.name}`;
      expect(seen.has(id)).toBe(false);
      seen.add(id);
    }
    expect(seen.size).toBeGreaterThanOrEqual(14);
  });

  describe.each(names)('%s', (s) => {
    const { schema, port, portVar } = services[s];
    const name = `gatehouse-${s}`;

    it('has a Deployment, Service, PodDisruptionBudget and HorizontalPodAutoscaler that fit together', () => {
      const d = deployment(s);
      const labels = d.spec?.template.metadata?.labels ?? {};
      expect(labels['app.kubernetes.io/part-of']).toBe('gatehouse');
      expect(selects(d.spec?.selector, labels)).toBe(true);
      const c = container(s);
      expect(c.image).toBe('gatehouse');
      expect(c.command).toBeUndefined(); // the image's CMD starts the service named by SERVICE
      expect(c.ports).toEqual([{ name: 'http', containerPort: port }]);

      const svc = only<Service>('Service', name);
      expect(svc.spec?.selector).toEqual(d.spec?.selector.matchLabels);
      expect(svc.spec?.ports).toEqual([{ name: 'http', port, targetPort: 'http' }]);

      const pdb = only<PodDisruptionBudget>('PodDisruptionBudget', name);
      expect(selects(pdb.spec?.selector, labels)).toBe(true);

      const hpa = only<HorizontalPodAutoscaler>('HorizontalPodAutoscaler', name);
      expect(hpa.spec?.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name });
      expect(hpa.spec?.minReplicas).toBeGreaterThanOrEqual(2);
      // The autoscaler owns the replica count; a count here would reset it on every apply.
      expect(d.spec?.replicas).toBeUndefined();
      // With minReplicas >= 2, one pod may go at a time and one still serves.
      expect(pdb.spec?.maxUnavailable ?? 0).toBeLessThan(hpa.spec?.minReplicas ?? 0);
    });

    it('probes /livez (startup, liveness) and /readyz (readiness) on its port', () => {
      const c = container(s);
      expect(c.startupProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
      expect(c.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'http' });
      expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'http' });
    });

    it('requests and limits memory (limit above request), requests CPU', () => {
      const { requests, limits } = container(s).resources ?? {};
      const mi = (q: unknown) => {
        const m = /^(\d+)Mi$/.exec(String(q));
        if (!m) throw new Error(`${s}: memory ${String(q)} is not in Mi`);
        return Number(m[1]);
      };
      // The measured idle RSS is 128-149 MiB on the bare host (docs/benchmarks.md): no request below it.
      expect(mi(requests?.memory)).toBeGreaterThanOrEqual(150);
      expect(mi(limits?.memory)).toBeGreaterThan(mi(requests?.memory));
      expect(requests?.cpu).toBeDefined();
    });

    it('runs as non-root on a read-only root filesystem, without service links', () => {
      const spec = podSpec(deployment(s));
      const c = container(s);
      expect(spec.securityContext?.runAsNonRoot).toBe(true);
      expect(c.securityContext?.readOnlyRootFilesystem).toBe(true);
      expect(c.securityContext?.allowPrivilegeEscalation).toBe(false);
      // Service links would set <SERVICE>_PORT=tcp://... (AUTH_PORT, TREE_PORT for a Service named auth, tree).
      expect(spec.enableServiceLinks).toBe(false);
      expect(spec.automountServiceAccountToken).toBe(false);
      const dataDir = envOf(c).get('DATA_DIR')?.value;
      expect(c.volumeMounts?.map((m) => m.mountPath)).toEqual(expect.arrayContaining([dataDir, '/tmp']));
    });

    it('sets only variables the service reads, secrets by secretKeyRef, what an operator must decide', () => {
      const env = envOf(container(s));
      expect(env.get('SERVICE')?.value).toBe(s);
      expect(env.get(portVar)?.value).toBe(String(port));
      const cm = configMap();
      for (const [v, e] of env) {
        if (!imageVars.has(v)) expect({ v, read: v in schema }).toEqual({ v, read: true });
        const spec = schema[v];
        const from = e.valueFrom;
        if (spec?.secret) {
          // A secret never appears as a literal value, nor in the ConfigMap.
          expect({ v, secretRef: from?.secretKeyRef?.name }).toEqual({ v, secretRef: 'gatehouse' });
        }
        if (from?.configMapKeyRef) {
          expect(from.configMapKeyRef.name).toBe('gatehouse');
          expect(Object.keys(cm.data ?? {})).toContain(from.configMapKeyRef.key);
        }
        // A literal value must be one the service accepts.
        if (e.value !== undefined && spec) expect(() => spec.parse(e.value as string, v)).not.toThrow();
        if (from?.configMapKeyRef && spec)
          expect(() => spec.parse(cm.data?.[from.configMapKeyRef?.key ?? ''] ?? '', v)).not.toThrow();
      }
      for (const v of mustSet[s]) expect({ v, set: env.has(v) }).toEqual({ v, set: true });
      // The encryption key and the database are required by the Deployment even though the code has fallbacks.
      for (const v of ['DATABASE_URL', 'SECRET_ENCRYPTION_KEY'])
        if (env.has(v)) expect(env.get(v)?.valueFrom?.secretKeyRef?.optional).toBeUndefined();
      // Every variable not set is optional for the service (it has a default or may be unset).
      for (const [v, spec] of Object.entries(schema))
        if (!env.has(v))
          expect({ v, optional: spec.default !== undefined || spec.optional === true }).toEqual({
            v,
            optional: true,
          });
    });

    it('reaches the token server at its Service, and auth is public at ISSUER', () => {
      const env = envOf(container(s));
      const authUrl = env.get('AUTH_URL')?.value;
      if (s !== 'auth') expect(authUrl).toBe(`http://gatehouse-auth:${services.auth.port}`);
      if (s === 'auth') {
        const issuer = new URL(configMap().data?.ISSUER ?? '');
        const ingress = only<Ingress>('Ingress', 'gatehouse');
        const rule = ingress.spec?.rules?.find((r) => r.host === issuer.host);
        expect(rule?.http?.paths[0].backend.service?.name).toBe('gatehouse-auth');
        expect(issuer.protocol).toBe('https:');
      }
    });

    it('can be reached only by the ingress controller and the Gatehouse services that call it', () => {
      const labels = deployment(s).spec?.template.metadata?.labels ?? {};
      const policies = all
        .filter((o) => o.kind === 'NetworkPolicy')
        .map((o) => o as unknown as NetworkPolicy)
        .filter((p) => selects(p.spec?.podSelector, labels));
      // Selected by at least one policy: then only what the policies allow gets in.
      expect(policies.length).toBeGreaterThan(0);
      const peers = new Set<string>();
      for (const p of policies) {
        expect(p.spec?.policyTypes).toContain('Ingress');
        for (const rule of p.spec?.ingress ?? []) {
          // A rule without `from` (or with an empty one) admits everyone; without ports, every port.
          expect(rule.from?.length).toBeGreaterThan(0);
          expect(rule.ports).toEqual([{ protocol: 'TCP', port: 'http' }]);
          for (const peer of rule.from ?? []) peers.add(peerName(peer));
        }
      }
      expect([...peers].sort()).toEqual([INGRESS_PEER, ...callers[s]].sort());
    });
  });

  it('the migration Job runs the migrate entry points of the three services', () => {
    const j = job();
    const spec = podSpec(j);
    expect(spec.restartPolicy).toBe('Never');
    expect(spec.enableServiceLinks).toBe(false);
    expect(spec.securityContext?.runAsNonRoot).toBe(true);
    const c = spec.containers[0];
    const script = (c.command ?? []).join(' ');
    // The same files as each app's `migrate` target (apps/*/project.json), auth first.
    const entries = names.map((s) => {
      const project = JSON.parse(readFileSync(path.join(root, `apps/${s}/project.json`), 'utf8')) as {
        targets: { migrate: { command: string } };
      };
      return project.targets.migrate.command.replace(/^node /, '');
    });
    const at = entries.map((e) => script.indexOf(e));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(script).toMatch(/&&[\s\S]*&&/); // one failure stops the Job
    // Only variables some service reads; the databases from the Secret.
    const env = envOf(c);
    for (const [v, e] of env) {
      expect({ v, read: names.some((s) => v in services[s].schema) }).toEqual({ v, read: true });
      if (names.some((s) => services[s].schema[v]?.secret))
        expect(e.valueFrom?.secretKeyRef?.name).toBe('gatehouse');
    }
    expect(env.has('DATABASE_URL')).toBe(true);
    expect(env.has('TREE_DATABASE_URL')).toBe(true);
    expect(j.spec?.template.metadata?.labels?.['app.kubernetes.io/part-of']).toBe('gatehouse');
    // Its pod is refused every connection (the default-deny policy selects it, no policy admits anything).
    const labels = j.spec?.template.metadata?.labels ?? {};
    const policies = all
      .filter((o) => o.kind === 'NetworkPolicy')
      .map((o) => o as unknown as NetworkPolicy)
      .filter((p) => selects(p.spec?.podSelector, labels));
    expect(policies.length).toBeGreaterThan(0);
    expect(policies.flatMap((p) => p.spec?.ingress ?? [])).toEqual([]);
  });

  it('docs/deployment.md lists the variables each Deployment leaves to their defaults', () => {
    const doc = readFileSync(docPath, 'utf8');
    const start = doc.indexOf(START);
    const end = doc.indexOf(END);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    const expected = `${START}\n\n${defaultsBlock()}\n\n${END}`;
    const actual = doc.slice(start, end + END.length);
    if (process.env.UPDATE_DOCS === '1' && normalizeTable(actual) !== normalizeTable(expected)) {
      writeFileSync(docPath, doc.replace(actual, expected));
      return;
    }
    expect(normalizeTable(actual)).toBe(normalizeTable(expected));
  });
});

/** The name of an allowed peer: the ingress controller, or a Gatehouse service in the same namespace. */
function peerName(peer: INetworkPolicyPeer): string {
  // An address range, or a namespace alone, would admit more than a named workload.
  expect(peer.ipBlock).toBeUndefined();
  if (peer.namespaceSelector) {
    expect(peer.namespaceSelector.matchLabels).toEqual({ 'kubernetes.io/metadata.name': 'ingress-nginx' });
    expect(peer.podSelector?.matchLabels).toEqual({ 'app.kubernetes.io/name': 'ingress-nginx' });
    return INGRESS_PEER;
  }
  const m = peer.podSelector?.matchLabels ?? {};
  expect(m['app.kubernetes.io/name']).toBe('gatehouse');
  const component = m['app.kubernetes.io/component'];
  expect(names).toContain(component);
  expect(Object.keys(m).sort()).toEqual(['app.kubernetes.io/component', 'app.kubernetes.io/name']);
  return component;
}
