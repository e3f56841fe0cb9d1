// Readings of a process's memory and the machine's load, from /proc and os, during the soak and the fault matrix.
import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * Resident set size of a live process, from /proc/<pid>/status (VmRSS).
 * @param {number} pid
 * @returns {number|null} MiB; null when the process is gone or /proc does not tell
 */
export function rssMib(pid) {
  try {
    const kib = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+)\s+kB$/m)?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}

/**
 * What else kept the machine busy: its 1-minute load average now.
 * @returns {number}
 */
export const loadAverage = () => Number(os.loadavg()[0].toFixed(2));
