// Package commandlines finds the command lines of one program that the
// repository's Markdown shows in fenced code blocks, so that a test can
// hold each against the program itself: every subcommand and flag a page
// shows must exist and take the value it is shown with, and an output a
// page shows under a command must still be what the command prints.
//
// Two kinds of block hold commands. In a shell block (sh, shell, bash)
// every line is a command, as a reader would paste it. In a console block
// (any block with a line starting "$ "), only the "$ " lines are commands
// and the lines under each, up to the next "$ " line, are its output.
// Other blocks (text, json, yaml, go, and unlabelled ones without a
// prompt) are not read: a line there is output or data, not a command.
//
// A command is found where the shell would run the program: at the start
// of a simple command (after NAME=value assignments), after "go run" of a
// package whose last element is the program, or after "time" and its
// flags. A line joined by a trailing backslash is one command; so is a
// synopsis continued on indented lines that start with a bracket or a
// flag, as the pages write long synopses.
//
// A synopsis ("sim [--seed N | --seeds A..B]", "replay --suite NAME") is
// told from a command to run by its brackets, parentheses or upper-case
// placeholders, and is read as a Usage: the words naming the command and
// each flag with the value it is documented with.
package commandlines
