// @ts-check
// The memory axis of the flight recorder's timeline (web/recorder.js draws it). Pure, so the unit tier checks it in
// Node (tests/unit/test_web_timeline_axis.py); it registers nothing.
import { fmtBytes, GiB, MiB } from "./format.js";

/** The axis spans at least this share of the highest peak: a difference of 1 % of it is at most 4 % of the height. */
export const MIN_SPAN = 0.25;
/** Room below the lowest peak, as a share of the peaks' range: the lowest bar keeps a fifth of the height or more. */
const LOW_ROOM = 0.25;
/** Values this close (a share of the highest) are drawn from 0: on the shortest cut axis (MIN_SPAN) their difference
 * would be under 1.4 px of the recorder's 70 px chart, and a cut axis would only say "not from 0" about bars that look
 * equal (rev24: peaks one byte apart got "3.6 GiB → 4.8 GiB"). ux20b's 1.70 and 1.72 GiB differ by 1.2 %: cut. */
export const NEAR = 0.005;

/**
 * [floor, top] of the memory axis, in bytes, and the words that say so. From zero, unless the peaks differ and every
 * one sits in the top half: then a run whose peaks differ little (a CPU host's process RSS, 4.6 to 4.8 GiB on every node) drew one solid
 * block, and the axis starts at a round figure below the lowest peak (a multiple of 0.1, 0.2, 0.5, 1, 2, 5 ... of the
 * top's unit, so fmtBytes prints it exactly), never above MIN_SPAN of the top and never so near the lowest peak that
 * it draws as a sliver (an axis from the lowest peak drew 1.70 and 1.72 GiB as a sliver and a full bar: ux20b). The
 * label names the start and says "not from 0" when it is not, both ends in the top's unit ("0.7 GiB → 1.0 GiB").
 * `line` holds the values of a line drawn on the same axis (the recorder's used memory): the axis spans them too, so
 * none is drawn on the base line as if it were at the floor.
 * @param {Array<number | null | undefined>} peaks
 * @param {Array<number | null | undefined>} [line]
 * @returns {{ floor: number, top: number, label: string }}
 */
export function memoryAxis(peaks, line = []) {
  const vals = /** @type {number[]} */ ([...peaks, ...line].filter((v) => typeof v === "number" && Number.isFinite(v) && v >= 0));
  const top = Math.max(...vals, 1);
  const low = Math.min(...vals, top);
  const unit = top >= GiB ? GiB : top >= MiB ? MiB : 0;
  const raw = Math.min(low - LOW_ROOM * (top - low), top * (1 - MIN_SPAN));
  let floor = 0;
  if (unit && top - low > NEAR * top && raw > top / 2) { // (nearly) equal values: nothing to show, the bars stay whole
    const quarter = (top - raw) / unit / 4;
    const p = 10 ** Math.floor(Math.log10(quarter));
    const tenths = Math.max(1, Math.round(10 * ([5, 2, 1].map((m) => m * p).find((s) => s <= quarter) ?? p)));
    // + 1e-6 of a step: 0.75 x int(4.8 GiB) is a hair under 3.6 GiB and would round down a whole step
    floor = (Math.floor((10 * raw) / unit / tenths + 1e-6) * tenths * unit) / 10;
    if (floor <= top / 2) floor = 0;
  }
  // a floor is a whole number of tenths of the unit, so one digit prints it exactly
  const inUnit = (/** @type {number} */ v) => `${(v / unit).toFixed(1)} ${unit === GiB ? "GiB" : "MiB"}`;
  const label = floor ? `memory ${inUnit(floor)} → ${inUnit(top)} (not from 0)` : `memory 0 → ${fmtBytes(top)}`;
  return { floor, top, label };
}

/**
 * A bar's height as a share of the axis, 0..1.
 * @param {number} v
 * @param {{ floor: number, top: number }} axis
 */
export function axisShare(v, axis) {
  return Math.max(0, Math.min(1, (v - axis.floor) / Math.max(1, axis.top - axis.floor)));
}
