set trace-commands on
break bitwise.c:19
break bitwise.c:10
run
next
continue
continue
