//! Event-driven model of one NAND channel shared by several ways.
//!
//! Each way is driven by a *way controller* running a script of [`Step`]s:
//! command/address and data transfer stages that need the shared channel,
//! internal delays and array busy times of its own die, and messages to and
//! from the other controllers (the DDT master/slave messages of seed 002
//! Table I). A discrete-event loop advances time: an arbiter grants the
//! channel to one requester at a time, first come first served (lower way
//! index first on a tie), and a way's array runs one operation at a time.
//!
//! Cache program falls out of [`Step::Array`]: the controller may go on as
//! soon as the array has *accepted* the operation (the page moved from the
//! cache register to the data register), so the next page's data-in overlaps
//! the running program; [`Step::WaitArray`] waits for the array to be idle.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A message between way controllers (seed 002 Table I and buffer hand-off).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Msg {
    /// The destination is ready for data input (program command issued).
    DinReady,
    /// A direct data transfer finished.
    DdtDone,
    /// A page was read out into the controller buffer.
    DataOutDone,
    /// A page left the controller buffer (data-in finished).
    DataInDone,
}

impl Msg {
    const COUNT: usize = 4;

    fn index(self) -> usize {
        match self {
            Msg::DinReady => 0,
            Msg::DdtDone => 1,
            Msg::DataOutDone => 2,
            Msg::DataInDone => 3,
        }
    }
}

/// One stage of a way controller's script.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Holds the shared channel for `ns` (command/address cycles or a data
    /// transfer of this way).
    Bus(u64),
    /// An internal delay of the way (tWB, tRR): no channel, no array.
    Delay(u64),
    /// Array busy the controller waits out (read busy, erase).
    Busy(u64),
    /// Starts an array operation of `ns` (program busy) as soon as the
    /// array is idle, and goes on once it has started (cache program).
    Array(u64),
    /// Waits until the way's array is idle.
    WaitArray,
    /// Posts one message.
    Post(Msg),
    /// Waits until `n` messages of a kind have been posted in total.
    Wait(Msg, u32),
}

/// What a run of the channel measured.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusRun {
    /// When the last controller finished and every array was idle, ns.
    pub end_ns: u64,
    /// Time the channel was held, ns.
    pub channel_busy_ns: u64,
    /// Array busy time of each way, ns.
    pub array_busy_ns: Vec<u64>,
}

impl BusRun {
    /// Channel utilisation over the run (busy / end time).
    pub fn channel_utilisation(&self) -> f64 {
        if self.end_ns == 0 {
            return 0.0;
        }
        self.channel_busy_ns as f64 / self.end_ns as f64
    }
}

/// Where a controller stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Runnable when its next event fires.
    Ready,
    /// Queued for the channel for this many ns.
    WantsBus(u64),
    /// Waiting for a message count.
    Waiting(Msg, u32),
    /// Script finished.
    Done,
}

struct Controller {
    script: Vec<Step>,
    pc: usize,
    state: State,
}

/// One channel with its ways and their controllers.
pub struct Channel {
    ctrls: Vec<Controller>,
    array_until: Vec<u64>,
    array_busy: Vec<u64>,
    posted: [u32; Msg::COUNT],
    /// Resume events: (time, controller).
    events: BinaryHeap<Reverse<(u64, usize)>>,
    bus_free: u64,
    bus_holder: Option<usize>,
    bus_queue: VecDeque<usize>,
    bus_busy: u64,
    now: u64,
}

impl Channel {
    /// A channel whose way `i` runs `scripts[i]`, all starting at time 0.
    pub fn new(scripts: Vec<Vec<Step>>) -> Self {
        let n = scripts.len();
        let mut events = BinaryHeap::new();
        for i in 0..n {
            events.push(Reverse((0, i)));
        }
        Channel {
            ctrls: scripts
                .into_iter()
                .map(|script| Controller {
                    script,
                    pc: 0,
                    state: State::Ready,
                })
                .collect(),
            array_until: vec![0; n],
            array_busy: vec![0; n],
            posted: [0; Msg::COUNT],
            events,
            bus_free: 0,
            bus_holder: None,
            bus_queue: VecDeque::new(),
            bus_busy: 0,
            now: 0,
        }
    }

    /// Runs every script to its end. Panics if the scripts deadlock (a
    /// controller waits for a message nobody posts): that is a script bug.
    pub fn run(mut self) -> BusRun {
        while let Some(Reverse((t, c))) = self.events.pop() {
            self.now = t;
            if self.bus_holder == Some(c) && self.bus_free <= t {
                // The holder's transfer ended: hand the channel on first.
                self.release_bus();
            }
            self.resume(c);
        }
        let stuck: Vec<usize> = (0..self.ctrls.len())
            .filter(|&i| self.ctrls[i].state != State::Done)
            .collect();
        assert!(stuck.is_empty(), "way controllers {stuck:?} deadlocked");
        let last_array = self.array_until.iter().copied().max().unwrap_or(0);
        BusRun {
            end_ns: self.now.max(last_array),
            channel_busy_ns: self.bus_busy,
            array_busy_ns: self.array_busy,
        }
    }

    /// Frees the channel and grants it to the next in line.
    fn release_bus(&mut self) {
        self.bus_holder = None;
        if let Some(next) = self.bus_queue.pop_front() {
            if let State::WantsBus(ns) = self.ctrls[next].state {
                self.grant(next, ns);
            }
        }
    }

    fn grant(&mut self, c: usize, ns: u64) {
        self.bus_holder = Some(c);
        self.bus_free = self.now + ns;
        self.bus_busy += ns;
        self.ctrls[c].state = State::Ready;
        self.ctrls[c].pc += 1;
        self.events.push(Reverse((self.bus_free, c)));
    }

    fn post(&mut self, m: Msg) {
        self.posted[m.index()] += 1;
        let count = self.posted[m.index()];
        for (i, c) in self.ctrls.iter_mut().enumerate() {
            if let State::Waiting(w, n) = c.state {
                if w == m && count >= n {
                    c.state = State::Ready;
                    c.pc += 1;
                    self.events.push(Reverse((self.now, i)));
                }
            }
        }
    }

    /// Books an array operation of `ns` on way `c` once its array is idle,
    /// moves past the step and returns when the operation starts.
    fn start_array(&mut self, c: usize, ns: u64) -> u64 {
        let start = self.now.max(self.array_until[c]);
        self.array_until[c] = start + ns;
        self.array_busy[c] += ns;
        self.ctrls[c].pc += 1;
        start
    }

    /// Runs controller `c` until it blocks.
    fn resume(&mut self, c: usize) {
        if self.ctrls[c].state != State::Ready {
            return;
        }
        loop {
            let pc = self.ctrls[c].pc;
            let Some(&step) = self.ctrls[c].script.get(pc) else {
                self.ctrls[c].state = State::Done;
                return;
            };
            match step {
                Step::Bus(ns) => {
                    self.ctrls[c].state = State::WantsBus(ns);
                    if self.bus_holder.is_some() {
                        self.bus_queue.push_back(c);
                    } else {
                        self.grant(c, ns);
                    }
                    return;
                }
                Step::Delay(ns) => {
                    self.ctrls[c].pc += 1;
                    self.events.push(Reverse((self.now + ns, c)));
                    return;
                }
                Step::Busy(ns) => {
                    let start = self.start_array(c, ns);
                    self.events.push(Reverse((start + ns, c)));
                    return;
                }
                Step::Array(ns) => {
                    let start = self.start_array(c, ns);
                    if start > self.now {
                        self.events.push(Reverse((start, c)));
                        return;
                    }
                }
                Step::WaitArray => {
                    self.ctrls[c].pc += 1;
                    if self.array_until[c] > self.now {
                        self.events.push(Reverse((self.array_until[c], c)));
                        return;
                    }
                }
                Step::Post(m) => {
                    self.ctrls[c].pc += 1;
                    self.post(m);
                }
                Step::Wait(m, n) => {
                    if self.posted[m.index()] >= n {
                        self.ctrls[c].pc += 1;
                    } else {
                        self.ctrls[c].state = State::Waiting(m, n);
                        return;
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_ways_share_the_channel_first_come_first_served() {
        let run = Channel::new(vec![
            vec![Step::Bus(100), Step::Busy(1000)],
            vec![Step::Bus(100), Step::Busy(1000)],
        ])
        .run();
        // Way 1 waits 100 ns for the channel, then both arrays overlap.
        assert_eq!(run.end_ns, 1200);
        assert_eq!(run.channel_busy_ns, 200);
        assert_eq!(run.array_busy_ns, vec![1000, 1000]);
    }

    #[test]
    fn cache_program_overlaps_the_next_transfer_with_program_busy() {
        let page = |cache: bool| {
            let mut s = vec![Step::Bus(300), Step::Array(1000)];
            if !cache {
                s.push(Step::WaitArray);
            }
            s
        };
        let plain: Vec<Step> = (0..3).flat_map(|_| page(false)).collect();
        let cached: Vec<Step> = (0..3)
            .flat_map(|_| page(true))
            .chain([Step::WaitArray])
            .collect();
        assert_eq!(Channel::new(vec![plain]).run().end_ns, 3 * 1300);
        assert_eq!(Channel::new(vec![cached]).run().end_ns, 300 + 3 * 1000);
    }

    #[test]
    fn messages_order_two_controllers() {
        let run = Channel::new(vec![
            vec![Step::Busy(500), Step::Post(Msg::DataOutDone)],
            vec![Step::Wait(Msg::DataOutDone, 1), Step::Bus(50)],
        ])
        .run();
        assert_eq!(run.end_ns, 550);
    }

    #[test]
    #[should_panic(expected = "deadlocked")]
    fn a_wait_nobody_answers_is_a_deadlock() {
        Channel::new(vec![vec![Step::Wait(Msg::DdtDone, 1)]]).run();
    }
}
