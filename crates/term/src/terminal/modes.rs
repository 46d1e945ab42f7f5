//! The input modes a client reads off the terminal ([`TerminalModes`]): which bytes keys send,
//! whether pastes are bracketed and which mouse reports the program reads.

use alacritty_terminal::term::TermMode;

/// Mouse events the program asked for (xterm modes 1000, 1002, 1003; the last one set wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MouseTracking {
    None,
    /// Presses and releases (1000).
    Click,
    /// Also motion while a button is held (1002).
    Drag,
    /// All motion (1003).
    Motion,
}

impl MouseTracking {
    pub fn name(self) -> &'static str {
        match self {
            MouseTracking::None => "none",
            MouseTracking::Click => "click",
            MouseTracking::Drag => "drag",
            MouseTracking::Motion => "motion",
        }
    }
}

/// The input modes a client needs to send the program what it expects: which bytes keys send,
/// whether pastes are bracketed, which mouse reports it reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TerminalModes {
    /// DECCKM: arrows, Home and End send SS3 sequences.
    pub application_cursor_keys: bool,
    /// DECKPAM: the keypad sends application sequences.
    pub application_keypad: bool,
    /// Mode 2004: pastes are wrapped in `CSI 200 ~` … `CSI 201 ~`.
    pub bracketed_paste: bool,
    pub alt_screen: bool,
    pub mouse_tracking: MouseTracking,
    /// Mode 1006: mouse reports in SGR form.
    pub sgr_mouse: bool,
    /// Mode 1004: focus in/out reports.
    pub focus_events: bool,
    /// IRM: printed text is inserted.
    pub insert: bool,
    /// DECAWM: text wraps at the last column.
    pub auto_wrap: bool,
}

impl TerminalModes {
    pub(super) fn of(modes: TermMode) -> Self {
        let mouse_tracking = if modes.contains(TermMode::MOUSE_MOTION) {
            MouseTracking::Motion
        } else if modes.contains(TermMode::MOUSE_DRAG) {
            MouseTracking::Drag
        } else if modes.contains(TermMode::MOUSE_REPORT_CLICK) {
            MouseTracking::Click
        } else {
            MouseTracking::None
        };
        Self {
            application_cursor_keys: modes.contains(TermMode::APP_CURSOR),
            application_keypad: modes.contains(TermMode::APP_KEYPAD),
            bracketed_paste: modes.contains(TermMode::BRACKETED_PASTE),
            alt_screen: modes.contains(TermMode::ALT_SCREEN),
            mouse_tracking,
            sgr_mouse: modes.contains(TermMode::SGR_MOUSE),
            focus_events: modes.contains(TermMode::FOCUS_IN_OUT),
            insert: modes.contains(TermMode::INSERT),
            auto_wrap: modes.contains(TermMode::LINE_WRAP),
        }
    }
}
