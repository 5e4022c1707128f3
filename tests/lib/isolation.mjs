// What a backend's ready line and GET /health say of its isolation on this
// machine (docs/backend/runtime-and-isolation.md, "Isolation modes"): the fields of
// api_isolation_fields, by mode and by the machine's cgroup hierarchy.
import { cgroupV2 } from '../../host/cgroup.mjs';

const NO_LIMITS = { memory: false, pids: false, cpu: false, disk: false };

// Full isolation: every limit, devices through v1's devices controller or a
// v2 device program; cgroup migrations (and so favordynmods) on v1 only.
export function fullIsolation(v2 = cgroupV2()) {
  return {
    isolation: 'full',
    limits: { memory: true, pids: true, cpu: true, disk: true, devices: v2 ? 'bpf' : 'cgroup' },
    cgroup: v2 ? 'v2' : 'v1',
    seccomp: true,
    cgroup_favor_dynmods: !v2,
  };
}

export const noIsolation = { isolation: 'none', limits: { ...NO_LIMITS, devices: false }, cgroup: null, seccomp: false, cgroup_favor_dynmods: false };

// Rootless without a delegated cgroup (cgroup v1, or v2 not delegated).
export const rootlessWithoutCgroups = { isolation: 'rootless', limits: { ...NO_LIMITS, devices: 'userns' }, cgroup: null, seccomp: true, cgroup_favor_dynmods: false };
