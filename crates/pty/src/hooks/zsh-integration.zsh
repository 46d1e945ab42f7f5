# Shellwright shell integration for zsh (run by the generated .zshrc after the user's own). Reports
# prompts (OSC 133 A/B), the start of a command's output (C), its exit status (D), its command line
# (OSC 633 E) and the working directory (OSC 7, OSC 633 P;Cwd) through zsh's own hooks (precmd,
# preexec), keeping the user's prompt, themes and hook functions working.

# Sets REPLY to $1 in OSC 633 value escaping: \\ for a backslash, \xAB for ';' and controls.
__sw_escape() {
  local v=$1
  v=${v//\\/\\\\}; v=${v//;/\\x3b}; v=${v//$'\n'/\\x0a}; v=${v//$'\r'/\\x0d}
  v=${v//$'\e'/\\x1b}; v=${v//$'\a'/\\x07}
  REPLY=$v
}

# First precmd hook: reports the finished command's status and the cwd, and hands the status on.
__sw_precmd() {
  local ret=$?
  __sw_escape "$PWD"
  builtin print -rn -- $'\e]133;D;'"$ret"$'\a\e]7;file://'"${HOST:-}$PWD"$'\a\e]633;P;Cwd='"$REPLY"$'\a'
  return $ret
}

# Last precmd hook: wraps whatever prompt the user (or their theme's hooks) set in A/B marks.
__sw_wrap_prompt() {
  local ret=$?
  if [[ $PS1 != *'133;B'* ]]; then __sw_ps1=$PS1; fi
  PS1=$'%{\e]133;A\a%}'"$__sw_ps1"$'%{\e]133;B\a%}'
  return $ret
}

# preexec hook: the command line as typed (zsh passes it when history is on), then the
# output-start mark.
__sw_preexec() {
  if [[ -n $1 ]]; then
    __sw_escape "$1"
    builtin print -rn -- $'\e]633;E;'"$REPLY"$'\a'
  fi
  builtin print -rn -- $'\e]133;C\a'
}

typeset -ga precmd_functions preexec_functions
precmd_functions=(__sw_precmd "${precmd_functions[@]}" __sw_wrap_prompt)
preexec_functions+=(__sw_preexec)
