// Package prober is the reference model of one kubelet probe worker
// (v1.36), written apart from core/prober and sharing none of its code, for
// the properties suite: given a probe spec, the kubelet's start, when the
// worker first runs, the container's states over time and the outcomes of
// the probes in the order they run, Run returns every result the worker
// publishes, with its time, and when the worker exits.
//
// It walks the worker's ticks (first run, then every period; probes are
// taken to answer at once and no manual trigger fires), reads the state in
// force at each tick, and applies the v1.36 rules as a short list: a new
// container resets the hold and publishes the type's initial value (none
// for a container started before the kubelet's start less 10 s); a
// container that is not running publishes Failure and the worker stops
// unless the script says it will run again; deletion publishes Success for
// liveness and startup and stops them; the initial delay counts whole
// seconds; startup probes only before Started, the others only after; a
// streak of equal verdicts publishes at its threshold; errors are skipped;
// liveness (on Failure) and startup (always) hold until the next
// container. Restart policies, sidecars, retries and the manager are not
// modelled: the script gives their answers.
package prober
