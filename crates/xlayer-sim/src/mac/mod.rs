//! MAC-layer schedulers as pure functions: given the users' instantaneous rates, their
//! averages and who has data, pick who transmits; the link model owns all state.

pub mod pf;
