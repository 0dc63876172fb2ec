# Makes the packaged /etc/seatwatch/seatwatch.toml from the example
# config/seatwatch.toml, so the two never drift apart: the same keys and
# comments, the query paths pointing at the installed packs, and a header
# that speaks of the package. cmake -DIN=example -DOUT=packaged -P this-file
file(READ "${IN}" text)
# The example's opening comment block speaks of copying queries/ around.
string(FIND "${text}" "\n\n" body_start)
if(body_start LESS 0)
  message(FATAL_ERROR "${IN}: no blank line after the opening comment")
endif()
string(SUBSTRING "${text}" ${body_start} -1 body)
string(REPLACE "\"../queries/" "\"/usr/share/seatwatch/queries/" body "${body}")
if(body MATCHES "\"\\.\\./")
  message(FATAL_ERROR "${IN}: a relative path other than ../queries/ is left")
endif()
set(header [=[# seatwatch configuration, installed by the seatwatch package: the booking
# pack, whose queries are in /usr/share/seatwatch/queries/ (copy and edit
# them elsewhere for your own schema). This file is a conffile: your edits
# are kept on upgrades. Set the database in /etc/default/seatwatch
# (SEATWATCH_DSN) rather than here, so that no password lives in this file;
# check a change with `seatwatch --config /etc/seatwatch/seatwatch.toml
# --check-config` and apply it with `systemctl reload seatwatch`.
# Every key is documented in
# /usr/share/doc/seatwatch/docs/configuration.md.]=])
file(WRITE "${OUT}" "${header}${body}")
