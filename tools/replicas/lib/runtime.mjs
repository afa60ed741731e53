// What runs the replicas: containers of docker/Dockerfile's image where a container engine answers (the deployment's
// own artifact, "several replicas of the same image behind HAProxy"), otherwise the built services from dist/ as
// processes. REPLICAS_RUNTIME=process|container picks one; unset, an engine that answers means containers.
// When an engine is expected (REPLICAS_RUNTIME=container; DOCKER_HOST, GATEHOUSE_BASE_IMAGE or DOCKER_IMAGE_TEST=1
// from tools/containers/engine.sh, as under .ci/run; CI=true as root where apt-get is), a missing engine or a failed
// image build is an error, never a quiet fall back to processes.
import { existsSync } from 'node:fs';
import { engineAnswers, ensureImage } from '../../containers/image.mjs';
import { containerRuntime, runProcessEntry, startProcessReplica } from './cluster.mjs';

/**
 * @typedef {object} ReplicaRuntime
 * @property {'container' | 'process'} mode
 * @property {string} [image]       the image's tag (containers)
 * @property {import('./cluster.mjs').StartReplica} startReplica
 * @property {import('./cluster.mjs').RunEntry} runEntry
 * @property {() => Promise<void>} close   removes what the runtime left (containers that did not stop)
 */

/**
 * @param {{ log?: (s: string) => void }} [o]
 * @returns {Promise<ReplicaRuntime>}
 */
export async function replicaRuntime(o = {}) {
  const log = o.log ?? ((s) => process.stderr.write(`${s}\n`));
  const forced = process.env.REPLICAS_RUNTIME ?? '';
  if (forced && forced !== 'process' && forced !== 'container')
    throw new Error(`REPLICAS_RUNTIME must be "process" or "container", not "${forced}"`);
  /** @type {ReplicaRuntime} */
  const processes = {
    mode: 'process',
    startReplica: startProcessReplica,
    runEntry: runProcessEntry,
    close: async () => undefined,
  };
  if (forced === 'process') {
    log('replicas: REPLICAS_RUNTIME=process: running the built services as processes');
    return processes;
  }
  const expectedBy = [
    forced === 'container' && 'REPLICAS_RUNTIME=container',
    process.env.DOCKER_IMAGE_TEST === '1' && 'DOCKER_IMAGE_TEST=1',
    process.env.GATEHOUSE_BASE_IMAGE && 'GATEHOUSE_BASE_IMAGE set',
    process.env.DOCKER_HOST && 'DOCKER_HOST set',
    // CI on a machine where engine.sh can start an engine (root, apt-get): an engine that failed to start there is
    // a failure to see, not a reason to test processes instead.
    process.env.CI === 'true' &&
      process.getuid?.() === 0 &&
      existsSync('/usr/bin/apt-get') &&
      'CI=true as root with apt-get',
  ].filter(Boolean);
  if (!engineAnswers()) {
    if (expectedBy.length)
      throw new Error(
        `replicas: a container engine is expected here (${expectedBy.join('; ')}) and \`docker info\` ` +
          'does not answer (tools/containers/engine.sh starts one)',
      );
    log('replicas: no container engine here, running the built services as processes');
    return processes;
  }
  // Throws when the build fails: an engine that answers means the containers must run.
  const image = await ensureImage({ log: (s) => log(`replicas: ${s}`) });
  log(
    `replicas: containers of ${image.tag} (${(image.bytes / 1e6).toFixed(0)} MB; ` +
      `${image.built ? `built in ${image.seconds.toFixed(0)} s` : 'already built'})`,
  );
  return { mode: 'container', image: image.tag, ...containerRuntime({ image: image.tag }) };
}
