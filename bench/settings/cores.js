// How the machine's cores are shared between the measured server and k6.
import { readFileSync } from 'node:fs';

/** How the docs say the default of WORKERS in the main job and the soak job (see splitCores). */
export const SERVER_CORES_TEXT = 'one per server core (all cores but the last, which k6 gets; 1 on a one-core machine)';


/**
 * The CPU ids of a CPU list as taskset and /proc write it (`0,2-3`: ranges and single ids, comma-separated; cpuset(7)).
 * @param {string} list e.g. '0', '0,1' or '0-2,4'
 * @returns {number[]} ids, in the list's order; empty for an empty list
 */
export function cpuList(list) {
  return list.split(',').filter((part) => part.trim() !== '').flatMap((part) => {
    const [from, to = from] = part.split('-').map(Number);
    return Array.from({ length: to - from + 1 }, (_, i) => from + i);
  });
}

/**
 * CPUs this process may run on, from /proc/self/status (Linux), e.g. [0, 1].
 * @returns {number[]} ids; empty when unknown
 */
export function allowedCpus() {
  try {
    return cpuList(readFileSync('/proc/self/status', 'utf8').match(/^Cpus_allowed_list:\s*(.+)$/m)?.[1] ?? '');
  } catch {
    return [];
  }
}

/**
 * How cores are shared: with two or more, k6 runs on the last one and the server on the others,
 * each pinned with taskset; with one, nothing is pinned. A run split over k6 instances
 * (K6_INSTANCES) gives each instance a core of its own from the last ones while the server keeps
 * at least one; with fewer cores than that, the instances share the last core.
 * @param {number[]} cpus allowed CPU ids
 * @param {number} [k6Instances] k6 processes per measured run (default 1)
 * @returns {{serverCpus?: string, k6Cpus?: string, k6InstanceCpus: (string|undefined)[], serverCoreCount: number,
 *   k6CoreCount: number, description: string}} k6Cpus: every core k6 gets; k6InstanceCpus: each instance's,
 *   in order; k6CoreCount: how many cores k6 gets in all
 */
export function splitCores(cpus, k6Instances = 1) {
  if (cpus.length < 2) {
    return {
      k6InstanceCpus: Array(k6Instances).fill(undefined), serverCoreCount: 1, k6CoreCount: 1,
      description: 'one core: server and k6 share it, not pinned',
    };
  }
  const own = cpus.length > k6Instances;
  const k6 = own ? cpus.slice(-k6Instances) : cpus.slice(-1);
  const server = cpus.slice(0, cpus.length - k6.length);
  const instances = k6Instances === 1 ? ''
    : own ? `, one k6 instance per cpu` : `; the ${k6Instances} k6 instances share cpu ${k6[0]}, too few cores for one each`;
  return {
    serverCpus: server.join(','),
    k6Cpus: k6.join(','),
    k6InstanceCpus: own ? k6.map(String) : Array(k6Instances).fill(String(k6[0])),
    serverCoreCount: server.length,
    k6CoreCount: k6.length,
    description: `server pinned to cpu ${server.join(',')}, k6 pinned to cpu ${k6.join(',')} (taskset)${instances}`,
  };
}

