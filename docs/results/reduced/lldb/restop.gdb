set trace-commands on
break bitwise.c:16
break bitwise.c:17
run
step
continue
continue
