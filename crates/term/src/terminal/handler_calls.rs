//! The emulator's `Handler` methods, listed once for the wrappers that treat whole groups of
//! them alike: [`PrintRuns`](super::print_runs::PrintRuns) forwards every one, and the reader of
//! elements in [`alternate`](super::alternate) tells drawing from the rest. A method the trait
//! gains is added here, to both.

/// Calls `$then!` with the methods that only draw: they change the active grid and its cursor
/// (position, pending wrap, pen) and nothing else this crate shows (see `alternate`).
macro_rules! drawing_calls {
    ($then:ident) => {
        $then! {
            fn goto(&mut self, line: i32, col: usize);
            fn goto_line(&mut self, line: i32);
            fn goto_col(&mut self, col: usize);
            fn move_up(&mut self, count: usize);
            fn move_down(&mut self, count: usize);
            fn move_forward(&mut self, col: usize);
            fn move_backward(&mut self, col: usize);
            fn put_tab(&mut self, count: u16);
            fn backspace(&mut self);
            fn carriage_return(&mut self);
            fn linefeed(&mut self);
            fn substitute(&mut self);
            fn clear_line(&mut self, mode: ::alacritty_terminal::vte::ansi::LineClearMode);
            fn clear_screen(&mut self, mode: ::alacritty_terminal::vte::ansi::ClearMode);
            fn terminal_attribute(&mut self, attr: ::alacritty_terminal::vte::ansi::Attr);
        }
    };
}

/// Calls `$then!` with DECSET and DECRST.
macro_rules! private_mode_calls {
    ($then:ident) => {
        $then! {
            fn set_private_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::PrivateMode);
            fn unset_private_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::PrivateMode);
        }
    };
}

/// Calls `$then!` with every other method but `input`, which each wrapper handles itself.
macro_rules! other_calls {
    ($then:ident) => {
        $then! {
            fn bell(&mut self);
            fn set_title(&mut self, title: Option<String>);
            fn set_cursor_style(&mut self, style: Option<::alacritty_terminal::vte::ansi::CursorStyle>);
            fn set_cursor_shape(&mut self, shape: ::alacritty_terminal::vte::ansi::CursorShape);
            fn insert_blank(&mut self, count: usize);
            fn identify_terminal(&mut self, intermediate: Option<char>);
            fn device_status(&mut self, kind: usize);
            fn move_down_and_cr(&mut self, row: usize);
            fn move_up_and_cr(&mut self, row: usize);
            fn newline(&mut self);
            fn set_horizontal_tabstop(&mut self);
            fn scroll_up(&mut self, count: usize);
            fn scroll_down(&mut self, count: usize);
            fn insert_blank_lines(&mut self, count: usize);
            fn delete_lines(&mut self, count: usize);
            fn erase_chars(&mut self, count: usize);
            fn delete_chars(&mut self, count: usize);
            fn move_backward_tabs(&mut self, count: u16);
            fn move_forward_tabs(&mut self, count: u16);
            fn save_cursor_position(&mut self);
            fn restore_cursor_position(&mut self);
            fn clear_tabs(&mut self, mode: ::alacritty_terminal::vte::ansi::TabulationClearMode);
            fn set_tabs(&mut self, interval: u16);
            fn reset_state(&mut self);
            fn reverse_index(&mut self);
            fn set_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::Mode);
            fn unset_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::Mode);
            fn report_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::Mode);
            fn report_private_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::PrivateMode);
            fn set_scrolling_region(&mut self, top: usize, bottom: Option<usize>);
            fn set_keypad_application_mode(&mut self);
            fn unset_keypad_application_mode(&mut self);
            fn set_active_charset(&mut self, index: ::alacritty_terminal::vte::ansi::CharsetIndex);
            fn configure_charset(&mut self, index: ::alacritty_terminal::vte::ansi::CharsetIndex, charset: ::alacritty_terminal::vte::ansi::StandardCharset);
            fn set_color(&mut self, index: usize, color: ::alacritty_terminal::vte::ansi::Rgb);
            fn dynamic_color_sequence(&mut self, prefix: String, index: usize, terminator: &str);
            fn reset_color(&mut self, index: usize);
            fn clipboard_store(&mut self, clipboard: u8, base64: &[u8]);
            fn clipboard_load(&mut self, clipboard: u8, terminator: &str);
            fn decaln(&mut self);
            fn push_title(&mut self);
            fn pop_title(&mut self);
            fn text_area_size_pixels(&mut self);
            fn text_area_size_chars(&mut self);
            fn set_hyperlink(&mut self, link: Option<::alacritty_terminal::vte::ansi::Hyperlink>);
            fn set_mouse_cursor_icon(&mut self, icon: ::alacritty_terminal::vte::ansi::cursor_icon::CursorIcon);
            fn report_keyboard_mode(&mut self);
            fn push_keyboard_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::KeyboardModes);
            fn pop_keyboard_modes(&mut self, to_pop: u16);
            fn set_keyboard_mode(&mut self, mode: ::alacritty_terminal::vte::ansi::KeyboardModes, behavior: ::alacritty_terminal::vte::ansi::KeyboardModesApplyBehavior);
            fn set_modify_other_keys(&mut self, mode: ::alacritty_terminal::vte::ansi::ModifyOtherKeys);
            fn report_modify_other_keys(&mut self);
            fn set_scp(&mut self, char_path: ::alacritty_terminal::vte::ansi::ScpCharPath, update_mode: ::alacritty_terminal::vte::ansi::ScpUpdateMode);
        }
    };
}
