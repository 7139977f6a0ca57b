# Writes the man page ckptbench.1 from the built program's help (cmake -P, at build time):
#   cmake -DCKPTBENCH=bin/ckptbench -DHELP2MAN=/usr/bin/help2man -DDATADIR=share/ckptbench
#         -DOUTPUT=man/ckptbench.1 -DVERSION=0.1.0 -P man_page.cmake
# help2man formats `ckptbench --help`; each subcommand listed there gets a subsection of
# SUBCOMMANDS from its own `--help`, so a new subcommand appears without editing this file.
foreach(var CKPTBENCH HELP2MAN DATADIR OUTPUT VERSION)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "man_page.cmake: -D${var}=... is required")
  endif()
endforeach()

# The help text has UTF-8 (an em dash, ×); help2man decodes it only under a UTF-8 locale.
# The page names the release (VERSION), not the build's git revision that --version adds.
set(help2man_flags --no-info --locale=C.UTF-8 "--version-string=${VERSION}")

function(run_help2man out)
  execute_process(COMMAND ${HELP2MAN} ${help2man_flags} ${ARGN} ${CKPTBENCH}
                  OUTPUT_VARIABLE page ERROR_VARIABLE errors RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "man_page.cmake: help2man ${ARGN} ${CKPTBENCH} failed (${rc}): ${errors}")
  endif()
  set(${out} "${page}" PARENT_SCOPE)
endfunction()

execute_process(COMMAND ${CKPTBENCH} --help OUTPUT_VARIABLE top_help RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "man_page.cmake: ${CKPTBENCH} --help failed (${rc})")
endif()
# CLI11 prints "Subcommands:" then one "  name   description" line per subcommand.
string(REGEX REPLACE "^.*\nSubcommands:\n" "" listing "${top_help}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z0-9_-]*" names "${listing}")
set(subcommands)
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  list(APPEND subcommands ${name})
endforeach()
if(NOT subcommands OR listing STREQUAL top_help)
  message(FATAL_ERROR "man_page.cmake: no \"Subcommands:\" list in `${CKPTBENCH} --help`")
endif()

# One subsection per subcommand: help2man's page for `ckptbench NAME --help` from its SYNOPSIS
# on, with its own section headings turned into bold paragraph labels.
set(subsections "")
foreach(name IN LISTS subcommands)
  run_help2man(page "--name=${name}" "--help-option=${name} --help")
  string(FIND "${page}" "\n.SH SYNOPSIS\n" start)
  if(start EQUAL -1)
    message(FATAL_ERROR "man_page.cmake: help2man gave no SYNOPSIS for `ckptbench ${name} --help`")
  endif()
  math(EXPR start "${start} + 14")
  string(SUBSTRING "${page}" ${start} -1 body)
  string(REPLACE "\n.SH DESCRIPTION\n" "\n.PP\n" body "${body}")
  string(REPLACE "\n.SH OPTIONS\n" "\n.PP\n.B \"Options:\"\n" body "${body}")
  # CLI11 leaves one space after an option wider than its column ("--pp-first-stage-layers INT
  # Layers ..."), which help2man sets as a run-in .HP paragraph; split it like the others.
  string(REGEX REPLACE "\n\\.HP\n(\\\\fB[^ \n]+\\\\fR [A-Z]+[^ \n]*) " "\n.TP\n\\1\n" body "${body}")
  string(REGEX REPLACE "\n\\.S[HS] \"?([^\"\n]*)\"?\n" "\n.PP\n.B \"\\1\"\n" body "${body}")
  string(APPEND subsections ".SS \"ckptbench ${name}\"\n${body}")
endforeach()

get_filename_component(out_dir "${OUTPUT}" DIRECTORY)
set(include_file "${out_dir}/ckptbench.h2m")
file(WRITE "${include_file}" "[=DESCRIPTION]
ckptbench models the tensor shards every rank of a training job writes (tensor, pipeline,
data and expert parallelism, ZeRO) and times checkpoint writes and restores of that layout
through a storage backend, verifying every byte.
.PP
Each subcommand has its own options; they are listed under SUBCOMMANDS and printed by
\\fBckptbench\\fR \\fIsubcommand\\fR \\fB\\-\\-help\\fR.
[SUBCOMMANDS]
${subsections}
[FILES]
.TP
.I PREFIX/${DATADIR}/configs/
Example campaigns for \\fBckptbench run\\fR; README.md there says what each measures.
.TP
.I PREFIX/${DATADIR}/zoo/
The model zoo as TOML files. The same models are built into the program (\\fBckptbench models\\fR);
copy one to describe another model and pass the file to \\fB\\-\\-model\\fR or \\fBmodel.name\\fR.
[EXAMPLES]
.nf
ckptbench models
ckptbench layout \\-\\-model llama3\\-70b \\-\\-tp 8 \\-\\-pp 4 \\-\\-rank 0
cd /scratch/me && ckptbench run PREFIX/${DATADIR}/configs/quickstart.toml \\-\\-dry\\-run
ckptbench run PREFIX/${DATADIR}/configs/quickstart.toml \\-\\-set campaign.target=/mnt/fast/ckpt
.fi
.PP
A relative \\fBcampaign.target\\fR (the examples use \\fIckptbench\\-target\\fR) and the default
\\fB\\-\\-output\\fR (\\fIresults/runs\\fR) are taken from the current directory, not from the
campaign file's: run from a writable directory on the storage under test, or set both.
")

run_help2man(page "--name=checkpoint I/O benchmark and workload generator for large transformer models"
             "--include=${include_file}")
# Plain roff for the non-ASCII characters, so groff without preconv renders them too.
string(REPLACE "—" "\\(em" page "${page}")
string(REPLACE "×" "\\(mu" page "${page}")
file(WRITE "${OUTPUT}" "${page}")
